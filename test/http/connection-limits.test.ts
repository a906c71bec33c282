import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';

// REQUEST_TIMEOUT_MS, HEADERS_TIMEOUT_MS and MAX_CONNECTIONS on a listening server, with raw
// sockets. The bounds are generous: what is asserted is that a connection is cut, not when.
let slow: Harness;
let capped: Harness;
let slowPort: number;
let cappedPort: number;

async function listen(h: Harness): Promise<number> {
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const address = h.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

beforeAll(async () => {
  slow = await startHarness({ REQUEST_TIMEOUT_MS: '1000', HEADERS_TIMEOUT_MS: '1000' });
  slowPort = await listen(slow);
  capped = await startHarness({ MAX_CONNECTIONS: '4' });
  cappedPort = await listen(capped);
});
afterAll(async () => {
  await slow.close();
  await capped.close();
});

interface Conversation {
  socket: net.Socket;
  /** Everything the server sent, once it closed the connection. */
  closed: Promise<string>;
}

function connect(port: number): Promise<Conversation> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    socket.on('error', () => undefined);
    const closed = new Promise<string>((done) => socket.on('close', () => done(received)));
    socket.once('connect', () => resolve({ socket, closed }));
    socket.once('error', reject);
  });
}

function openConnections(h: Harness): Promise<number> {
  return new Promise((resolve, reject) =>
    h.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );
}

/** Resolves with what `closed` gave, or with undefined when it has not closed after `ms`. */
function within<T>(ms: number, promise: Promise<T>): Promise<T | undefined> {
  return Promise.race([promise, new Promise<undefined>((resolve) => setTimeout(resolve, ms))]);
}

describe('slow and idle connections', () => {
  it('cuts a request whose body trickles in past the request timeout', async () => {
    const { socket, closed } = await connect(slowPort);
    socket.write(
      'POST /oauth2/token HTTP/1.1\r\nHost: test\r\nContent-Type: application/x-www-form-urlencoded\r\n' +
        'Content-Length: 200\r\n\r\n',
    );
    // One byte every 100 ms: the whole body would take 20 seconds.
    let sent = 0;
    const trickle = setInterval(() => {
      if (!socket.destroyed && sent < 199) {
        socket.write('a');
        sent += 1;
      }
    }, 100);
    try {
      const answer = await within(15_000, closed);
      expect(answer).toBeDefined();
      expect(sent).toBeLessThan(199);
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    } finally {
      clearInterval(trickle);
      socket.destroy();
    }
  });

  it('cuts a connection whose headers do not arrive in time', async () => {
    const { socket, closed } = await connect(slowPort);
    socket.write('GET /healthz HTTP/1.1\r\nHost: test\r\n');
    const answer = await within(15_000, closed);
    socket.destroy();
    expect(answer).toBeDefined();
    expect(answer).not.toMatch(/ 200 /);
  });

  it('closes connections past the cap, and serves again once others close', async () => {
    const held = await Promise.all([1, 2, 3, 4].map(() => connect(cappedPort)));
    // Connected is not yet accepted: wait until the server holds all four.
    for (let attempt = 0; attempt < 100 && (await openConnections(capped)) < 4; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await openConnections(capped)).toBe(4);
    const extra = await connect(cappedPort);
    extra.socket.write('GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n');
    expect(await within(10_000, extra.closed)).toBe('');
    for (const { socket } of held) socket.destroy();

    let status: number | undefined;
    for (let attempt = 0; attempt < 50 && status !== 200; attempt += 1) {
      status = await fetch(`http://127.0.0.1:${cappedPort}/healthz`)
        .then((r) => r.status)
        .catch(() => undefined);
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(200);
  });
});
