import type { Server, ServerOptions } from 'node:http';
import type { Config } from '../config.js';

/** How often Node looks for requests past their timeouts: they close within this of being due. */
const CONNECTION_CHECK_MS = 1000;

/**
 * Node's server options for config.connections, shared by the public and the admin listener so
 * neither can be held by slow senders: a request must arrive whole within requestTimeout (its
 * headers within headersTimeout), and an idle kept-alive connection closes after
 * keepAliveTimeout. Node checks these every connectionsCheckingInterval, which only an option
 * given at creation sets (its default, 30 s, would let a cut come long after it is due).
 */
export function connectionOptions(connections: Config['connections']): ServerOptions {
  return {
    requestTimeout: connections.requestTimeoutMs,
    headersTimeout: connections.headersTimeoutMs,
    keepAliveTimeout: connections.keepAliveTimeoutMs,
    connectionsCheckingInterval: CONNECTION_CHECK_MS,
  };
}

/** Connections past the cap are closed as they are accepted: each listener has its own cap. */
export function capConnections(server: Server, connections: Config['connections']): void {
  server.maxConnections = connections.max;
}
