import { describe, expect, it } from 'vitest';
import { addTimeExpression, isTimeExpression } from '../../src/domain/orders/time-expression.js';
import { canonicalJson } from '../../src/domain/orders/idempotency.js';

describe('y-m-d time expressions', () => {
  const at = (y: number, m: number, d: number, h = 0) => Date.UTC(y, m - 1, d, h);

  it.each([
    ['1-0-0', at(2023, 3, 15, 9), at(2024, 3, 15, 9)],
    ['0-1-0', at(2024, 1, 31), at(2024, 2, 29)],
    ['0-1-0', at(2023, 1, 31), at(2023, 2, 28)],
    ['1-0-0', at(2024, 2, 29), at(2025, 2, 28)],
    ['0-0-1', at(2024, 2, 28), at(2024, 2, 29)],
    ['0-13-0', at(2024, 12, 31), at(2026, 1, 31)],
    ['2-6-10', at(2024, 8, 31), at(2027, 3, 10)],
    ['0-0-0', at(2024, 5, 5), at(2024, 5, 5)],
  ])('%s from %d ends at %d', (expression, start, end) => {
    expect(addTimeExpression(start, expression)).toBe(end);
  });

  it('accepts only y-m-d of digits', () => {
    expect(isTimeExpression('1-0-0')).toBe(true);
    for (const bad of ['1-0', '1y', '-1-0-0', '1-0-0-0', '1.5-0-0', ' 1-0-0', '']) {
      expect(isTimeExpression(bad)).toBe(false);
    }
  });
});

describe('canonical JSON', () => {
  it('is the same text whatever the key order', () => {
    expect(canonicalJson({ b: 1, a: [{ d: null, c: 'x' }] })).toBe(
      canonicalJson({ a: [{ c: 'x', d: null }], b: 1 }),
    );
    expect(canonicalJson({ a: [1, 2] })).not.toBe(canonicalJson({ a: [2, 1] }));
  });

  // Stored orders keep the hash of their body: the text must never change, or a client's retry of
  // an order placed before an upgrade would be refused as a different body.
  it('writes exactly the text of the original definition', () => {
    const reference = (value: unknown): string => {
      if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
      if (value !== null && typeof value === 'object') {
        const entries = Object.entries(value as Record<string, unknown>)
          .filter(([, v]) => v !== undefined)
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${reference(v)}`).join(',')}}`;
      }
      return JSON.stringify(value);
    };
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const keys = ['a', 'B', 'é', 'a"b', '10', '9', 'z\\', '', 'sequence', 'Ω', 'x\u0000y', 'x', 'y'];
    const make = (depth: number): unknown => {
      const pick = random();
      if (depth > 3 || pick < 0.3) {
        return [null, true, false, 0, -1.5, 1e21, 'x', 'multi\nline', '"q"', undefined][
          Math.floor(random() * 10)
        ];
      }
      if (pick < 0.6) return Array.from({ length: Math.floor(random() * 4) }, () => make(depth + 1));
      return Object.fromEntries(
        Array.from({ length: Math.floor(random() * 5) }, () => [
          keys[Math.floor(random() * keys.length)],
          make(depth + 1),
        ]),
      );
    };
    for (let i = 0; i < 2000; i += 1) {
      const value = { body: make(0) };
      expect(canonicalJson(value)).toBe(reference(value));
    }
  });
});
