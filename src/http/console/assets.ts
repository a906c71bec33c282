import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { App } from '../app-type.js';
import { ACCESS } from '../access/access.js';

interface Asset {
  body: string;
  type: string;
  etag: string;
}

function asset(body: string, type: string): Asset {
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"` };
}

/**
 * The console's stylesheet, script and icon, read once at start and served from this origin: no
 * CDN, nothing to build. The stylesheet is the console's own (it replaced simple.css, whose type
 * scale and button-like navigation did not fit a dense operator's console).
 */
function loadAssets(): Map<string, Asset> {
  const own = (name: string) => readFileSync(new URL(`./public/${name}`, import.meta.url), 'utf8');
  return new Map([
    ['console.css', asset(own('console.css'), 'text/css; charset=utf-8')],
    ['console.js', asset(own('console.js'), 'text/javascript; charset=utf-8')],
    ['favicon.svg', asset(own('favicon.svg'), 'image/svg+xml')],
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
