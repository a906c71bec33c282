import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrl } from '../support/database.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

// The admin listener under slowloris: clients that send their headers a byte a second to hold
// connections open. It has the public listener's bounds (HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS,
// KEEPALIVE_TIMEOUT_MS, MAX_CONNECTIONS): slow connections are cut, and the operator still gets
// answers. A real process, since the admin listener is a server of its own. The bounds waited
// for are generous: what is asserted is that a connection is cut, not when.
const ADMIN_KEY = randomBytes(24).toString('hex');
const MAX_CONNECTIONS = 12;
/** Each slow client gives up by itself after this many bytes (one a second). */
const SLOW_BYTES = 40;

let dataDir: string;
let server: ServerProcess;
let adminPort: number;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-admin-slow-'));
  server = await startServerProcess({
    DATABASE_URL: testDatabaseUrl() ?? '',
    DATA_DIR: dataDir,
    KEYWARD_ADMIN_KEY: ADMIN_KEY,
    ADMIN_PORT: '0',
    HEADERS_TIMEOUT_MS: '1000',
    REQUEST_TIMEOUT_MS: '2000',
    KEEPALIVE_TIMEOUT_MS: '1000',
    MAX_CONNECTIONS: String(MAX_CONNECTIONS),
  });
  const [, port] = await server.waitFor(/admin API listening at http:\/\/127\.0\.0\.1:(\d+)/);
  adminPort = Number(port);
});
afterAll(async () => {
  if (server?.child.exitCode === null) await server.stop();
  if (dataDir !== undefined) fs.rmSync(dataDir, { recursive: true, force: true });
});

interface Slow {
  /** What the server sent before it closed the connection. */
  closed: Promise<string>;
  /** Header bytes sent so far. */
  sent(): number;
  stop(): void;
}

/** A slowloris client: a request line, then header bytes one a second, never the blank line. */
function slowClient(): Promise<Slow> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(adminPort, '127.0.0.1');
    let received = '';
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    socket.on('error', () => undefined);
    const closed = new Promise<string>((done) =>
      socket.on('close', () => {
        clearInterval(timer);
        done(received);
      }),
    );
    const stop = () => {
      clearInterval(timer);
      socket.destroy();
    };
    socket.once('connect', () => {
      socket.write('GET /admin/apps HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
      timer = setInterval(() => {
        if (sent >= SLOW_BYTES) return stop();
        socket.write('a');
        sent += 1;
      }, 1000);
      resolve({ closed, sent: () => sent, stop });
    });
    socket.once('error', reject);
  });
}

/** Resolves with what `promise` gave, or undefined when it has not settled after `ms`. */
function within<T>(ms: number, promise: Promise<T>): Promise<T | undefined> {
  return Promise.race([promise, new Promise<undefined>((resolve) => setTimeout(resolve, ms))]);
}

/** GET /admin/apps on a connection of its own (no pool), which it closes once answered. */
const listApps = () =>
  new Promise<number | undefined>((resolve, reject) => {
    const request = http.get(
      {
        host: '127.0.0.1',
        port: adminPort,
        path: '/admin/apps',
        agent: false,
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      },
      (answer) => {
        answer.resume();
        answer.on('end', () => resolve(answer.statusCode));
      },
    );
    request.on('error', reject);
  });

/** The admin listener's answer, asked until it gives 200 or `tries` run out (100 ms apart). */
async function answersAgain(tries: number): Promise<number | undefined> {
  let status: number | undefined;
  for (let attempt = 0; attempt < tries && status !== 200; attempt += 1) {
    status = await listApps().catch(() => undefined);
    if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return status;
}

describe('the admin listener under slow requests', { timeout: 120_000 }, () => {
  it('answers while slow clients trickle headers, and cuts them at the headers timeout', async () => {
    const slow = await Promise.all(Array.from({ length: MAX_CONNECTIONS / 2 }, () => slowClient()));
    try {
      expect(await listApps()).toBe(200);
      const answers = await Promise.all(slow.map((s) => within(20_000, s.closed)));
      // Cut by the server (a 408), long before the clients would have given up by themselves.
      for (const [i, answer] of answers.entries()) {
        expect(answer, `slow client ${i} still connected`).toBeDefined();
        expect(answer).toMatch(/^HTTP\/1\.1 408 /);
        expect(slow[i]?.sent()).toBeLessThan(SLOW_BYTES);
      }
      expect(await listApps()).toBe(200);
    } finally {
      for (const s of slow) s.stop();
    }
  });

  it('holds at most MAX_CONNECTIONS, and answers again once the slow ones are cut', async () => {
    const slow = await Promise.all(Array.from({ length: MAX_CONNECTIONS }, () => slowClient()));
    try {
      // Past the cap a connection is closed as it is accepted, unanswered: the slow clients hold
      // no more than MAX_CONNECTIONS of the process's sockets.
      const extra = await slowClient();
      expect(await within(10_000, extra.closed)).toBe('');
      expect(await answersAgain(200)).toBe(200);
      const answers = await Promise.all(slow.map((s) => within(20_000, s.closed)));
      expect(answers.every((answer) => answer !== undefined)).toBe(true);
    } finally {
      for (const s of slow) s.stop();
    }
  });
});
