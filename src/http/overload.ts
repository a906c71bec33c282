import underPressure from '@fastify/under-pressure';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { CommonCode, commonMessages } from '../errors/common-codes.js';
import type { App } from './app-type.js';
import { failure } from './envelope.js';
import { surfaceOfRequest } from './surface.js';

/**
 * What an overloaded server tells a caller to wait before trying again. Short: the overload is a
 * moment's (a pool queue, a slow turn of the event loop), and a caller told to wait long would
 * come back with everyone else at once.
 */
export const OVERLOAD_RETRY_AFTER_SECONDS = 2;

/**
 * The answer to a call the server is too busy to take (DOMAIN.md §12): HTTP 503 and Retry-After,
 * in the shape of the call's surface. Sets the status and headers and returns the body to send.
 */
export function overloadAnswer(request: FastifyRequest, reply: FastifyReply, reason: string): unknown {
  request.log.debug({ reason }, 'overloaded');
  reply.code(503).header('retry-after', String(OVERLOAD_RETRY_AFTER_SECONDS));
  const retry = `retry in ${OVERLOAD_RETRY_AFTER_SECONDS} seconds`;
  switch (surfaceOfRequest(request)) {
    case 'admin':
      return { error: `server busy: ${reason}; ${retry}` };
    case 'oauth':
      return { error: 'temporarily_unavailable', error_description: `server busy; ${retry}` };
    case 'console':
      reply.type('text/plain; charset=utf-8');
      return `Busy: ${retry}.`;
    default:
      // Like "500", the cause is the request id, which the server's log lines carry.
      return failure(CommonCode.overloaded, commonMessages[CommonCode.overloaded], request.id);
  }
}

/** How often the event loop's delay is sampled: its mean over this long is what the limit judges. */
const SAMPLE_MS = 1000;

/** Calls are not shed this soon after the server is ready (see installOverloadShedding). */
export const START_GRACE_MS = 2 * SAMPLE_MS;

/**
 * Sheds calls while the event loop runs late by more than EVENT_LOOP_DELAY_LIMIT_MS on average over
 * a second: a server that late answers everyone late, and taking more calls only adds to it. The
 * probes stay answered: /healthz says the process is up and /readyz whether the database answers,
 * which a busy server's are; a proxy that took it out for being busy would move its load onto the
 * others and take them out in turn.
 */
export async function installOverloadShedding(app: App, config: Config): Promise<void> {
  if (config.eventLoopDelayLimitMs === 0) return;
  let readyAt: number | undefined;
  app.addHook('onReady', async () => {
    readyAt = performance.now();
  });
  await app.register(underPressure, {
    maxEventLoopDelay: config.eventLoopDelayLimitMs,
    sampleInterval: SAMPLE_MS,
    pressureHandler: (request, reply, _type, value) => {
      if (surfaceOfRequest(request) === 'ops') return undefined;
      // Start-up compiles every route's schemas in one go, seconds on a loaded machine: the
      // samples that saw it measured the start, not a load to shed.
      if (readyAt === undefined || performance.now() - readyAt < START_GRACE_MS) return undefined;
      const late = `the event loop runs ${Math.round(value ?? 0)} ms late`;
      // under-pressure sends what the handler returns (its types say only void).
      return overloadAnswer(request, reply, late) as void;
    },
  });
}
