import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { redactUrl } from './log-serializers.js';

/**
 * Paths a load balancer or Prometheus asks every few seconds: at info they would bury the calls a
 * person is looking for, so they log at debug.
 */
export const PROBE_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/** pino's level numbers: a line is written at or above the logger's level. */
const LEVEL_VALUES: Readonly<Record<string, number>> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
};

/** Whether a logger at `current` writes a line at `level` (an unknown level, say `silent`, writes none). */
function writes(current: string, level: string): boolean {
  const threshold = LEVEL_VALUES[current] ?? Number.POSITIVE_INFINITY;
  return (LEVEL_VALUES[level] ?? 0) >= threshold;
}

/** `3.2 ms` below ten milliseconds, `41 ms` above: as precise as a person reads it. */
function shownTime(ms: number): string {
  return `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`;
}

/** The line's text: `GET /order/api/order/v1/shellnums?g_nonce=… 200 3.2 ms`, credentials redacted. */
export function requestLine(method: string, url: string, status: number, ms: number): string {
  return `${method} ${redactUrl(url)} ${status} ${shownTime(ms)}`;
}

/**
 * One log line per request, when its answer has gone out, instead of Fastify's two (one on
 * arrival, one at completion): method, URL, status and time in the message, and the same as
 * fields (`req`, `res.statusCode`, `responseTime`) for a machine. Fastify's other lines (errors it
 * handles itself) stay as they are.
 */
export class RequestLogController extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    const path = request.url.split('?')[0] ?? '';
    const level = error ? 'error' : PROBE_PATHS.has(path) ? 'debug' : 'info';
    // Built only when it will be written: at LOG_LEVEL=warn every request would pay for a line
    // nobody reads.
    if (!writes(request.log.level, level)) return;
    const responseTime = reply.elapsedTime;
    const fields = { req: request, res: { statusCode: reply.statusCode }, responseTime };
    const line = requestLine(request.method, request.url, reply.statusCode, responseTime);
    if (error) {
      request.log.error({ ...fields, err: error }, line);
      return;
    }
    request.log[level](fields, line);
  }
}
