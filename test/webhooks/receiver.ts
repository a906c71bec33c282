import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** How the test receiver answers a path; the default answers 204. */
export type Behaviour = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export interface Receiver {
  url: string;
  received: Received[];
  on(path: string, behaviour: Behaviour): void;
  close(): Promise<void>;
}

/** A local HTTP receiver that keeps every request and answers each path as told. */
export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const behaviours = new Map<string, Behaviour>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const behaviour = behaviours.get(path);
      if (behaviour) behaviour(req, res);
      else res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    on: (path, behaviour) => behaviours.set(path, behaviour),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
