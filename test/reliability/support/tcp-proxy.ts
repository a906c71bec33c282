import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** Stops listening and cuts every open connection: the target is unreachable. */
  close(): Promise<void>;
  /** Listens again on the same port. */
  reopen(): Promise<void>;
  /**
   * Black-holes the target, as a partition does: open connections stay open but nothing crosses
   * them either way, and new ones are accepted but never reach it. Nothing is closed.
   */
  silence(): void;
  /** Ends the silence: the connections it held are cut (their bytes are lost), new ones pass. */
  speak(): void;
}

/**
 * A TCP proxy on a free loopback port to `target`: a way to take a database away from a server and
 * give it back without touching the database itself.
 */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let silent = false;
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const server = net.createServer((client) => {
    track(client);
    // Accepted and never answered: a silent database's new connections hang the same way.
    if (silent) return void client.on('error', () => undefined);
    const upstream = net.connect(target.port, target.host);
    track(upstream);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    // Bytes are forwarded only while the proxy speaks: silence drops them.
    client.on('data', (chunk: Buffer) => {
      if (!silent) upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!silent) client.write(chunk);
    });
    client.on('end', () => {
      if (!silent) upstream.end();
    });
    upstream.on('end', () => {
      if (!silent) client.end();
    });
  });
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve((server.address() as net.AddressInfo).port);
      });
    });
  const port = await listen(0);
  return {
    port,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    async reopen() {
      await listen(port);
    },
    silence() {
      silent = true;
    },
    speak() {
      silent = false;
      for (const socket of sockets) socket.destroy();
    },
  };
}
