import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYWARD_ICON } from '../../src/http/docs/brand.js';
import { GLOSSARY } from '../../src/http/docs/glossary.js';
import { ME_PREFIX, ORDER_PREFIX } from '../../src/http/surface.js';
import { startHarness, type Harness } from '../support/harness.js';

// /docs in words for people: each operation says what it does, with the interface documents' name
// and op number after it; the documents' jargon stays in parentheses, code or the glossary, which
// /docs links to; the page is Keyward's, by title and icon, not the Fastify logo.

interface Operation {
  summary?: string;
  description?: string;
}
interface Document {
  info: { title: string; description: string };
  tags: Array<{ name: string; description?: string }>;
  paths: Record<string, Record<string, Operation>>;
}

/** Spec words a reader meets before the glossary explains them. */
const JARGON = [
  /gongxin/i,
  /shellnums/i,
  /HTTP\W*299/i,
  /industry-and-information/i,
  /master account/i,
  /virtual asset/i,
  /physical lock/i,
];

/** `(…, order op 5)`, `(…, member op 10)`, or `(…, Keyward's addition to order op 5)`. */
const OP_REFERENCE =
  /^[A-Z][^()]+ \((?<name>[^()]+), (?<addition>Keyward's addition to )?(?<surface>order|member) op (?<n>\d+)\)$/;

/** The words a reader reads first: without code spans and what stands in parentheses. */
function plainWords(text: string): string {
  let plain = text.replace(/`[^`]*`/g, '');
  for (let before = ''; before !== plain;) {
    before = plain;
    plain = plain.replace(/\([^()]*\)/g, '');
  }
  return plain;
}

function jargonIn(where: string, text: string | undefined): string[] {
  const plain = plainWords(text ?? '');
  return JARGON.filter((word) => word.test(plain)).map((word) => `${where}: ${word.source}`);
}

/** What is wrong with the document's words: a missing or doubled op reference, jargon in plain sight. */
function wordProblems(document: Document): string[] {
  const problems: string[] = [];
  const numbered = new Map<string, string[]>();
  problems.push(...jargonIn('info', document.info.description));
  for (const tag of document.tags) problems.push(...jargonIn(`tag ${tag.name}`, tag.description));
  for (const [url, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const name = `${method.toUpperCase()} ${url}`;
      const summary = operation.summary ?? '';
      problems.push(
        ...jargonIn(`${name} summary`, summary),
        ...jargonIn(`${name} description`, operation.description),
      );
      const spec = url.startsWith(`${ORDER_PREFIX}/`)
        ? 'order'
        : url.startsWith(`${ME_PREFIX}/`)
          ? 'member'
          : undefined;
      const found = OP_REFERENCE.exec(summary)?.groups;
      if (spec === undefined) {
        // The runtime, webhooks, tokens and probes are Keyward's own: no op number to claim.
        if (/\bop \d/.test(summary)) problems.push(`${name}: claims an op number`);
        continue;
      }
      if (found === undefined || found.surface !== spec) {
        problems.push(`${name}: no (name, ${spec} op N) after its words: ${summary}`);
        continue;
      }
      if (found.addition === undefined) {
        const key = `${spec} op ${found.n}`;
        numbered.set(key, [...(numbered.get(key) ?? []), name]);
      }
    }
  }
  for (const [spec, count] of [
    ['order', 9],
    ['member', 10],
  ] as const) {
    for (let n = 1; n <= count; n++) {
      const names = numbered.get(`${spec} op ${n}`) ?? [];
      if (names.length !== 1) problems.push(`${spec} op ${n}: ${names.length} operations name it`);
    }
  }
  return problems;
}

let h: Harness;
let document: Document;

beforeAll(async () => {
  h = await startHarness();
  document = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json() as Document;
});
afterAll(async () => h.close());

describe('the reference in words for people', () => {
  it('says what every operation does, then its name and op number, with no jargon in plain sight', () => {
    expect(wordProblems(document)).toEqual([]);
    expect(document.paths[`${ORDER_PREFIX}/enterprise/user/create`]?.post?.summary).toBe(
      'Create a customer and its enterprise (create industry-and-information customer, order op 2)',
    );
  });

  it('fails a summary without its op reference, a doubled op, jargon outside parentheses', () => {
    const bad: Document = {
      info: { title: 'x', description: 'A refusal answers HTTP **299**; see `shellnums` (gongxin).' },
      tags: [],
      paths: {
        [`${ORDER_PREFIX}/enterprise/user/create`]: {
          post: { summary: 'Create industry-and-information customer' },
        },
        [`${ORDER_PREFIX}/shellnums`]: { post: { summary: 'Obtain asset numbers (shellnums, order op 9)' } },
        [`${ORDER_PREFIX}/again`]: {
          post: { summary: 'Obtain asset numbers again (shellnums, order op 9)' },
        },
        [`${ME_PREFIX}/enterprise/x/member`]: {
          post: { summary: 'Add employees (add employees, order op 1)' },
        },
        '/runtime/v1/leases': { post: { summary: 'Check out a seat (lease, order op 3)' } },
      },
    };
    const problems = wordProblems(bad);
    expect(problems).toContain('info: HTTP\\W*299');
    expect(problems.some((p) => p.includes('shellnums') || p.includes('gongxin'))).toBe(false);
    expect(problems).toContain(
      `POST ${ORDER_PREFIX}/enterprise/user/create summary: industry-and-information`,
    );
    expect(problems).toContain('order op 9: 2 operations name it');
    expect(
      problems.some((p) => p.startsWith(`POST ${ME_PREFIX}/enterprise/x/member: no (name, member op N)`)),
    ).toBe(true);
    expect(problems).toContain('POST /runtime/v1/leases: claims an op number');
  });

  it('links the glossary from the introduction, and serves it with every row of docs/model.md', async () => {
    expect(document.info.description).toContain('[glossary](/docs/glossary)');
    const page = await h.app.inject({ method: 'GET', url: '/docs/glossary' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(String(page.headers['content-security-policy'])).toContain("default-src 'none'");
    expect(page.body).toContain('<title>Glossary · Keyward API reference</title>');
    expect(page.body).toContain('<strong>gongxin customer</strong>');
    expect(page.body).toContain('<code>userToken</code>');
    expect(page.body.match(/<tr>/g)).toHaveLength(GLOSSARY.length + 1);
    // The page's rows are docs/model.md's, word for word.
    const model = fs.readFileSync(path.resolve(import.meta.dirname, '../../docs/model.md'), 'utf8');
    const table = model.slice(model.indexOf('## Glossary'), model.indexOf('## Tables'));
    const rows = table
      .split('\n')
      .filter((l) => l.startsWith('| ') && !l.startsWith('| ---') && !l.startsWith('| the documents say'))
      .map((l) =>
        l
          .slice(1, -1)
          .split(' | ')
          .map((cell) => cell.trim()),
      );
    expect(rows).toEqual(GLOSSARY.map((row) => [row.term, row.keyward, row.elsewhere]));
    for (const asset of ['/docs/glossary.css', '/docs/logo.svg', '/console/assets/favicon.svg']) {
      expect((await h.app.inject({ method: 'GET', url: asset })).statusCode, asset).toBe(200);
    }
  });
});

describe('GET /docs', () => {
  it("is Keyward's: its title, its icon in the tab and the top bar, no Fastify logo", async () => {
    const page = await h.app.inject({ method: 'GET', url: '/docs' });
    expect(page.body).toContain('<title>Keyward API reference</title>');
    expect(page.body).not.toContain('favicon-32x32.png');
    const icon = /<link rel="icon" type="image\/svg\+xml" href="([^"]+)"/.exec(page.body)?.[1] ?? '';
    const served = await h.app.inject({ method: 'GET', url: icon.replace(/^\.\//, '/docs/') });
    expect(served.statusCode, icon).toBe(200);
    expect(served.body).toBe(KEYWARD_ICON);
    const script = (await h.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' })).body;
    const logo = Buffer.from(
      /data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)/.exec(script)?.[1] ?? '',
      'base64',
    ).toString('utf8');
    expect(logo).toContain('Keyward API');
    expect(logo).toContain(KEYWARD_ICON.slice(KEYWARD_ICON.indexOf('<rect')));
    const fastify = fs.readFileSync(
      path.resolve(import.meta.dirname, '../../node_modules/@fastify/swagger-ui/static/logo.svg'),
    );
    expect(script).not.toContain(fastify.toString('base64').slice(0, 200));
    expect(logo.toLowerCase()).not.toContain('fastify');
  });
});
