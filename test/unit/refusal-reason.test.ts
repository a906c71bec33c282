import { describe, expect, it } from 'vitest';
import { fillMessage } from '../../src/errors/keyward-error.js';
import { runtimeMessages, type RuntimeCodeValue } from '../../src/errors/runtime-codes.js';
import { translator } from '../../src/http/console/i18n/index.js';
import { refusalSentence } from '../../src/http/console/usage/refusal-reason.js';

// A refused check-out's reason, as the audit row keeps it (the runtime's English message), said
// again in the console's language with the values it carried: every code of the runtime's table.

const VALUES = ['7', '2026-01-31T00:00:00.000Z', '12'];

describe('refusalSentence', () => {
  for (const code of Object.keys(runtimeMessages) as RuntimeCodeValue[]) {
    it(`says ${code} in both languages with the message's values`, () => {
      const message = fillMessage(runtimeMessages[code], ...VALUES);
      const placeholders = runtimeMessages[code].match(/\{\d+\}/g)?.length ?? 0;
      for (const locale of ['en', 'zh-CN'] as const) {
        const sentence = refusalSentence(translator(locale), code, message);
        expect(sentence).not.toMatch(/\{\d+\}/);
        expect(sentence).not.toContain(code);
        for (const value of VALUES.slice(0, placeholders)) expect(sentence).toContain(value);
        if (locale === 'zh-CN') expect(sentence).toMatch(/[\u4e00-\u9fff]/);
      }
    });
  }

  it('says a code or a wording it does not know as refused, with the code', () => {
    expect(refusalSentence(translator('zh-CN'), '90005', 'seats gone')).toBe('已拒绝（代码 90005）。');
    expect(refusalSentence(translator('en'), '99999', 'x')).toBe('Refused (code 99999).');
  });
});
