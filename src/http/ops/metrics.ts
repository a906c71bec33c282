import { DELIVERY_OUTCOMES } from '../../domain/webhooks/delivery.service.js';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { safeEqual } from '../../domain/shared/secrets.js';
import type { App } from '../app-type.js';
import { bearerOf } from '../guards/common.js';
import { ACCESS } from '../access/access.js';
import { RuntimeCode } from '../../errors/runtime-codes.js';

/** Prometheus metrics at /metrics: per-route request counts and latencies, plus process metrics. */
export function metricsRoutes(app: App): void {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'keyward_http_requests_total',
    help: 'HTTP requests answered',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'keyward_http_request_duration_seconds',
    help: 'HTTP request latency',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });

  const services = app.services;
  // Product ids are the tenants' own names for what they sell: labelled only when the operator asks
  // (METRICS_PRODUCT_LABELS=1); else one total, which tells a scraper nothing of any tenant.
  const byProduct = app.config.metricsProductLabels;
  new Gauge({
    name: 'keyward_runtime_seats_in_use',
    help: byProduct
      ? 'Seats held by live runtime leases, per product (crmProductId, else productUri), on every instance'
      : 'Seats held by live runtime leases, all products together (METRICS_PRODUCT_LABELS=1: per product), on every instance',
    labelNames: ['product'] as const,
    registers: [registry],
    // Read from the database at each scrape: the seats are shared by all instances, so every
    // instance reports the same figure.
    async collect() {
      this.reset();
      const rows = await services.runtime.seatsByProduct();
      if (!byProduct) {
        this.set(rows.reduce((sum, row) => sum + row.seats, 0));
        return;
      }
      for (const row of rows) this.set({ product: row.product }, row.seats);
    },
  });

  new Gauge({
    name: 'keyward_webhook_backlog',
    help: 'Pending webhook deliveries of enabled endpoints: due now, or waiting for a retry; on every instance',
    labelNames: ['state'] as const,
    registers: [registry],
    // From the database, like the seats: the outbox is shared, so every instance reports the same.
    async collect() {
      const backlog = await services.webhookDeliveries.backlog();
      this.set({ state: 'due' }, backlog.due);
      this.set({ state: 'waiting' }, backlog.waiting);
    },
  });
  const deliveries = new Counter({
    name: 'keyward_webhook_deliveries_total',
    help: "Webhook delivery attempts this instance's worker made, by outcome",
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  // Every outcome from zero, so a rate over an outcome that has not happened yet is 0, not absent.
  for (const outcome of DELIVERY_OUTCOMES) deliveries.inc({ outcome }, 0);
  services.webhookDeliveries.onOutcome((outcome) => deliveries.inc({ outcome }));

  const refused = new Counter({
    name: 'keyward_runtime_checkouts_refused_total',
    help: "Check-outs this instance refused, by the refusal's code (90005: no free seat)",
    labelNames: ['code'] as const,
    registers: [registry],
  });
  // The seat refusal from zero, so an alert on its rate has a series before the first refusal.
  refused.inc({ code: RuntimeCode.seatsInUse }, 0);
  services.runtime.onDenial((code) => refused.inc({ code }));

  app.addHook('onResponse', async (request, reply) => {
    // The route pattern, never the concrete URL: ids in paths would explode the label set.
    const route = request.routeOptions.url ?? 'unknown';
    requests.inc({ method: request.method, route, status: String(reply.statusCode) });
    duration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });

  const token = app.config.metricsToken;
  app.get('/metrics', { config: { access: ACCESS.metrics } }, async (request, reply) => {
    // Route counts and process figures help an attacker size the service: a token when set.
    if (token !== undefined) {
      const given = bearerOf(request);
      if (given === undefined || !safeEqual(given, token)) {
        return reply
          .code(401)
          .header('www-authenticate', 'Bearer')
          .send({ error: 'metrics token missing or wrong' });
      }
    }
    reply.header('content-type', registry.contentType);
    return registry.metrics();
  });
}
