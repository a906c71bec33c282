import type { ComponentChildren } from 'preact';
import { ACCESS } from '../access/access.js';
import type { App } from '../app-type.js';
import { sendPage } from '../console/render.js';
import { docsLogo } from './brand.js';
import { GLOSSARY, GLOSSARY_INTRO } from './glossary.js';

/**
 * The page's policy: the console's stylesheet and icon, nothing that runs. Its own hook, since
 * the docs plugin's policy (which allows Swagger UI's inline styles) covers its routes only.
 */
const GLOSSARY_POLICY = [
  "default-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "img-src 'self'",
  "style-src 'self'",
].join('; ');

/** The page's own few rules, on the reference page's colours (the console's frame is not for it). */
const GLOSSARY_CSS = `body { margin: 0; font: 15px/1.5 system-ui, sans-serif; color: #1f2937; background: #fff; }
header { background: #1b1b1b; padding: 10px 24px; }
header a { display: inline-block; }
main { max-width: 76rem; margin: 0 auto; padding: 8px 24px 48px; }
h1 { font-size: 28px; margin: 16px 0 8px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: 6px 10px; border-bottom: 1px solid #e5e7eb; }
th { background: #f3f4f6; font-size: 13px; }
td:first-child { width: 16rem; }
td:last-child { width: 18rem; color: #4b5563; }
code { font: 13px ui-monospace, monospace; background: #f3f4f6; padding: 0 3px; border-radius: 3px; }
`;

/**
 * The few Markdown marks the glossary's cells use: **bold**, `code` and [text](link). A link is
 * to docs/ beside the file (model.md's sections, runtime.md): here its words stay, without it.
 */
export function inlineMarkdown(text: string): ComponentChildren[] {
  const parts: ComponentChildren[] = [];
  const mark = /\*\*(.+?)\*\*|`([^`]+)`|\[([^\]]+)\]\([^)]+\)/g;
  let last = 0;
  for (const found of text.matchAll(mark)) {
    parts.push(text.slice(last, found.index));
    const [, bold, code, link] = found;
    if (bold !== undefined) parts.push(<strong>{inlineMarkdown(bold)}</strong>);
    else if (code !== undefined) parts.push(<code>{code}</code>);
    // "below" points further down docs/model.md, which this page is not.
    else parts.push(link === 'below' ? 'in docs/model.md' : (link ?? ''));
    last = found.index + found[0].length;
  }
  parts.push(text.slice(last));
  return parts.filter((part) => part !== '');
}

function GlossaryPage() {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>Glossary · Keyward API reference</title>
        <link rel="icon" type="image/svg+xml" href="/console/assets/favicon.svg" />
        <link rel="stylesheet" href="/docs/glossary.css" />
      </head>
      <body>
        <header>
          <a href="/docs" title="Keyward API reference">
            <img src="/docs/logo.svg" alt="Keyward API" height="40" />
          </a>
        </header>
        <main class="glossary">
          <h1>Glossary</h1>
          <p>{GLOSSARY_INTRO}</p>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th>the documents say</th>
                  <th>in Keyward</th>
                  <th>elsewhere</th>
                </tr>
              </thead>
              <tbody>
                {GLOSSARY.map((row) => (
                  <tr>
                    <td>{inlineMarkdown(row.term)}</td>
                    <td>{inlineMarkdown(row.keyward)}</td>
                    <td>{inlineMarkdown(row.elsewhere)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <p>
            <a href="/docs">← Keyward API reference</a>
          </p>
        </main>
      </body>
    </html>
  );
}

/** GET /docs/glossary: the interface documents' words, linked from the reference's introduction. */
export async function glossaryRoute(app: App): Promise<void> {
  await app.register(async (scope) => {
    scope.addHook('onSend', async (_request, reply) => {
      reply.header('content-security-policy', GLOSSARY_POLICY);
    });
    scope.get(
      '/docs/glossary',
      { config: { access: ACCESS.public }, schema: { hide: true } as object },
      async (_request, reply) => sendPage(reply, <GlossaryPage />),
    );
    const files: Array<[string, string, string]> = [
      ['/docs/glossary.css', 'text/css; charset=utf-8', GLOSSARY_CSS],
      ['/docs/logo.svg', 'image/svg+xml', docsLogo()],
    ];
    for (const [url, type, body] of files) {
      scope.get(
        url,
        { config: { access: ACCESS.public }, schema: { hide: true } as object },
        async (_request, reply) => reply.header('cache-control', 'public, max-age=300').type(type).send(body),
      );
    }
  });
}
