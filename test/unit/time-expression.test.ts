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
});
