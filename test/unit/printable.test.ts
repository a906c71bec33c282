import { describe, expect, it } from 'vitest';
import { printable, printableJson, text } from '../../src/cli/printable.js';

describe('printable', () => {
  it('shows C0, DEL and C1 as \\xNN escapes and leaves other text alone', () => {
    expect(printable('a\u001b[2Jb\r\n\t\u007f\u0080\u009f')).toBe('a\\x1b[2Jb\\x0d\\x0a\\x09\\x7f\\x80\\x9f');
    expect(printable('Zoë 张三 😀 \\x1b')).toBe('Zoë 张三 😀 \\x1b');
  });

  it('shows line separators and bidirectional overrides as \\u{…}', () => {
    expect(printable('a\u2028b\u202ec\u2066')).toBe('a\\u{2028}b\\u{202e}c\\u{2066}');
  });

  it('escapes the values of a text template, never its own layout', () => {
    const name = 'x\ny';
    expect(text`${name}\t${1}\n`).toBe('x\\x0ay\t1\n');
  });

  it('writes JSON that parses back to the same value, without raw C1 or separators', () => {
    const value = { name: 'a\u009b\u2028\u007f\u001b' };
    const written = printableJson(value);
    expect(written).toBe('{"name":"a\\u009b\\u2028\\u007f\\u001b"}');
    expect(JSON.parse(written)).toEqual(value);
  });
});
