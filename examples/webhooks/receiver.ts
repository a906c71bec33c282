import { createServer } from 'node:http';
import { verifyWebhook } from '@keyward/client';

// A receiver for Keyward's webhooks, in one file: it verifies every delivery's signature with the
// endpoint's secret and prints each verified event once, as one line of JSON. The tour
// (docs/tour.md) runs it on this machine; a real receiver does the same behind https.
//
//   WEBHOOK_SECRET=whsec_… npx tsx examples/webhooks/receiver.ts URL [--count N] [--timeout SECONDS]
//
// It listens on URL's host and port and answers on URL's path. With --count it stops after N
// distinct events, and then gives up with status 1 after --timeout seconds (60) without them.

const [url = 'http://127.0.0.1:8090/keyward', ...flags] = process.argv.slice(2);
const option = (name: string, fallback: number): number => {
  const at = flags.indexOf(name);
  return at < 0 ? fallback : Number(flags[at + 1]);
};
const count = option('--count', Infinity);
const timeoutSeconds = option('--timeout', Number.isFinite(count) ? 60 : Infinity);
const secret = process.env.WEBHOOK_SECRET ?? '';
if (!secret.startsWith('whsec_')) throw new Error('WEBHOOK_SECRET must hold the endpoint secret (whsec_…)');

const listenOn = new URL(url);
// Keyward delivers at least once: a repeat carries the same webhook-id, and is acknowledged again
// but acted on only once.
const seen = new Set<string>();

const server = createServer(async (req, res) => {
  if (req.method !== 'POST' || req.url !== listenOn.pathname) return res.writeHead(404).end();
  let body = '';
  for await (const chunk of req.setEncoding('utf8')) body += chunk;
  try {
    // The raw body, byte for byte, is what the signature covers: verify first, parse after.
    const event = await verifyWebhook(secret, body, req.headers);
    res.writeHead(204).end();
    if (seen.has(event.id)) return;
    seen.add(event.id);
    console.log(JSON.stringify(event));
    if (seen.size >= count) server.close(() => process.exit(0));
  } catch (error) {
    console.error(`refused a delivery: ${error instanceof Error ? error.message : String(error)}`);
    res.writeHead(400).end();
  }
});

server.listen(Number(listenOn.port || 80), listenOn.hostname);
if (Number.isFinite(timeoutSeconds)) {
  setTimeout(() => {
    console.error(`no ${count} events within ${timeoutSeconds} s`);
    process.exit(1);
  }, timeoutSeconds * 1000).unref();
}
