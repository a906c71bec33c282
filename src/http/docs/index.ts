import swagger from '@fastify/swagger';
import swaggerUi, { type FastifySwaggerUiOptions } from '@fastify/swagger-ui';
import type { App } from '../app-type.js';
import { DOCS_POLICY } from '../security-headers.js';
import { docsLogo, DOCS_TITLE, KEYWARD_ICON } from './brand.js';
import { documentBase } from './document-base.js';
import { glossaryRoute } from './glossary-page.js';
import { nonceInterceptor } from './nonce-interceptor.js';
import { trackRoutes } from './route-catalog.js';
import { documentFor, transformDocument, transformRoute } from './transform.js';
import { ACCESS } from '../access/access.js';

type UiConfig = NonNullable<FastifySwaggerUiOptions['uiConfig']>;

/**
 * The OpenAPI 3.1 document at /openapi.json, generated from the route schemas, the reference
 * page at /docs (Swagger UI, served from the package: no CDN) and its glossary at /docs/glossary. Registered before any route, since
 * both watch routes as they are added.
 */
export async function registerApiDocs(app: App): Promise<void> {
  trackRoutes(app);
  await app.register(swagger, {
    openapi: documentBase,
    transform: transformRoute,
    // A schema with its own `$id` (the recursive merchandise tree) becomes a component of that
    // name, so the document and the generated client say `LicenseOrderMerchandise`, not `def-0`.
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === 'string' && /^[A-Za-z0-9._-]+$/.test(json.$id) ? json.$id : `def-${i}`,
    },
    transformObject: (documentObject) =>
      'openapiObject' in documentObject ? transformDocument(documentObject.openapiObject) : {},
  });
  await glossaryRoute(app);
  app.get(
    '/openapi.json',
    { config: { access: ACCESS.public }, schema: { hide: true } as object },
    async (request) => documentFor(app.swagger(), request),
  );
  // The reference page's routes are the plugin's own: they are declared public here, where they
  // are registered, like every other route.
  await app.register(async (docs) => {
    docs.addHook('onRoute', (route) => {
      route.config = { ...route.config, access: ACCESS.public };
    });
    await docs.register(swaggerUi, {
      routePrefix: '/docs',
      staticCSP: DOCS_POLICY,
      // Keyward's own name and icon, in the tab and the top bar, not the plugin's Fastify logo.
      theme: {
        title: DOCS_TITLE,
        favicon: [
          {
            filename: 'favicon.svg',
            rel: 'icon',
            type: 'image/svg+xml',
            sizes: 'any',
            content: KEYWARD_ICON,
          },
        ],
      },
      logo: { type: 'image/svg+xml', content: docsLogo(), href: '/docs', target: '_self' },
      transformSpecification: (document, request) => documentFor(document, request),
      uiConfig: {
        deepLinking: true,
        displayRequestDuration: true,
        // Swagger UI hands the interceptor a plain object, not the fetch Request its typings name.
        requestInterceptor: nonceInterceptor as unknown as UiConfig['requestInterceptor'],
      },
    });
  });
}
