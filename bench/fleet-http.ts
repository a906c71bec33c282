import http from 'node:http';
import { freshNonce } from './load.js';

// The fleet's calls to the license runtime, over kept-alive connections of node:http. fetch costs
// the load generator several times the CPU per call, and at 1,667 heartbeats a second on two cores
// shared with the server and PostgreSQL that CPU would be taken from what is measured.

export interface Answer {
  /** HTTP status; 0 when no answer came (the connection failed or timed out). */
  status: number;
  body: string;
  /** From the call's start (its wait for a free connection included) to its whole answer. */
  ms: number;
}

export class RuntimeClient {
  private readonly agent: http.Agent;
  private readonly target: URL;

  constructor(
    url: string,
    private readonly appToken: string,
    sockets: number,
    /** A call unanswered this long is given up (status 0), as a program's HTTP client gives up. */
    private readonly timeoutMs: number,
  ) {
    this.target = new URL(url);
    // In turn (fifo), not the last used first: every connection stays in use, so none sits idle
    // until the server closes it (KEEPALIVE_TIMEOUT_MS) just as a call is sent on it, which the
    // first full run met 19 times in 500,000 heartbeats ("socket hang up").
    this.agent = new http.Agent({
      keepAlive: true,
      maxSockets: sockets,
      maxFreeSockets: sockets,
      scheduling: 'fifo',
    });
  }

  /** POST `path` under /runtime/v1 with a fresh g_nonce, as the licensed program sends it. */
  post(path: string, body: unknown): Promise<Answer> {
    const payload = JSON.stringify(body);
    const started = performance.now();
    return new Promise((resolve) => {
      const answer = (status: number, text: string) =>
        resolve({ status, body: text, ms: performance.now() - started });
      const request = http.request(
        {
          agent: this.agent,
          host: this.target.hostname,
          port: this.target.port,
          method: 'POST',
          path: `/runtime/v1${path}?g_nonce=${freshNonce()}`,
          headers: {
            authorization: `Bearer ${this.appToken}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(payload),
          },
          timeout: this.timeoutMs,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => answer(response.statusCode ?? 0, Buffer.concat(chunks).toString()));
          response.on('error', (error) => answer(0, String(error)));
        },
      );
      request.on('timeout', () => request.destroy(new Error(`no answer within ${this.timeoutMs} ms`)));
      request.on('error', (error) => answer(0, String(error)));
      request.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** A runtime answer with business code 0. */
export const succeeded = (a: Answer): boolean => a.status === 200 && a.body.startsWith('{"code":0,');
