import { readFileSync } from 'node:fs';

/** The console's icon, the one mark Keyward has: the reference page shows it too. */
export const KEYWARD_ICON = readFileSync(new URL('../console/public/favicon.svg', import.meta.url), 'utf8');

/** The reference page's title, in the browser's tab and its top bar. */
export const DOCS_TITLE = 'Keyward API reference';

/**
 * The top bar's logo (Swagger UI draws it 40 px high on a dark bar): the icon and the name, in
 * place of the Fastify logo the plugin shows by default. The icon is nested whole, so a change
 * to the console's icon shows here as well.
 */
export function docsLogo(): string {
  return [
    '<svg xmlns="http://www.w3.org/2000/svg" width="216" height="40" viewBox="0 0 216 40">',
    KEYWARD_ICON.replace('<svg ', '<svg x="4" y="4" width="32" height="32" '),
    '<text x="46" y="27" font-family="system-ui, sans-serif" font-size="20" font-weight="700" fill="#fff">',
    'Keyward API</text></svg>',
  ].join('');
}
