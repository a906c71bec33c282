import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { App } from '../app-type.js';
import { ACCESS } from '../access/access.js';

const require = createRequire(import.meta.url);

interface Asset {
  body: string;
  type: string;
  etag: string;
}

function asset(body: string, type: string): Asset {
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"` };
}

/**
 * The console's stylesheet (simple.css from npm, then ours) and script, read once at start and
 * served from this origin: no CDN, nothing to build.
 */
function loadAssets(): Map<string, Asset> {
  const own = (name: string) => readFileSync(new URL(`./public/${name}`, import.meta.url), 'utf8');
  const simple = readFileSync(require.resolve('simpledotcss/simple.min.css'), 'utf8');
  return new Map([
    ['console.css', asset(`${simple}\n${own('console.css')}`, 'text/css; charset=utf-8')],
    ['console.js', asset(own('console.js'), 'text/javascript; charset=utf-8')],
  ]);
}

export function consoleAssetRoutes(app: App): void {
  const assets = loadAssets();
  app.get<{ Params: { name: string } }>(
    '/assets/:name',
    { config: { access: ACCESS.consoleShared } },
    async (request, reply) => {
      const found = assets.get(request.params.name);
      if (found === undefined) return reply.callNotFound();
      reply.header('cache-control', 'public, max-age=300').header('etag', found.etag);
      if (request.headers['if-none-match'] === found.etag) return reply.code(304).send();
      return reply.type(found.type).send(found.body);
    },
  );
}
