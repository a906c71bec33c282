import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleLines } from '../../src/cli/demo/print-demo.js';
import { startHarness, type Harness } from '../support/harness.js';

// How an operator signs in, told the same way wherever a newcomer reads it: `keyward demo`'s
// output, the console's landing page and the README's first steps. What the code does: the email
// and the one-time password `keyward operator add` printed, a password of one's own before any
// other page, then two-factor sign-in; the admin key while no owner exists.

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The facts each telling must carry, in its language. */
const STORY = {
  en: {
    'one-time password': /one-time password/,
    'a password of your own': /(your|their) own( password)?/,
    'two factors': /two-factor sign-in/,
    'the admin key while no owner exists': /(no owner (yet|exists)[^.]*admin key|admin key[^.]*no owner)/i,
  },
  zh: {
    'one-time password': /一次性密码/,
    'a password of your own': /设置自己的密码/,
    'two factors': /两步验证/,
    'the admin key while no owner exists': /尚无所有者[^。]*管理密钥/,
  },
};

function expectStory(text: string, language: keyof typeof STORY, where: string): void {
  const flat = text.replace(/\s+/g, ' ');
  for (const [fact, pattern] of Object.entries(STORY[language])) {
    expect(flat, `${where} tells ${fact}`).toMatch(pattern);
  }
}

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h.close());

describe('one story of signing in', () => {
  it('in the README’s first steps', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const start = readme.indexOf('\n## First steps');
    const firstSteps = readme.slice(start, readme.indexOf('\n### ', start));
    expectStory(firstSteps, 'en', 'the README');
  });

  it('in what keyward demo prints', () => {
    const lines = consoleLines('http://127.0.0.1:17500', { account: 'admin@abc123', password: 'pw' });
    expect(lines).toContain('  operator            http://127.0.0.1:17500/console/operator/sign-in');
    expectStory(lines.join('\n'), 'en', 'keyward demo');
  });

  it('on the console’s landing page, in both languages', async () => {
    for (const [language, lang] of [
      ['en', 'en-US'],
      ['zh', 'zh-CN'],
    ] as const) {
      const page = await h.app.inject({ method: 'GET', url: '/console', cookies: { keyward_lang: lang } });
      expect(page.statusCode).toBe(200);
      const text = page.body.replace(/<[^>]+>/g, ' ');
      expectStory(text, language, `the landing page (${lang})`);
      expect(text).not.toContain('Sign in with the admin key (KEYWARD');
    }
  });
});
