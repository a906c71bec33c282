import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ActivationFormatError,
  CROCKFORD,
  decodeRequest,
  decodeTyped,
  encodeRequest,
  encodeTyped,
  TypedCodeError,
  type ActivationRequest,
} from '../../packages/client/src/activation/index.js';

const request = (overrides: Partial<ActivationRequest> = {}): ActivationRequest => ({
  appKey: 'kw_conformance_app',
  assetNum: '8000000001',
  crmProductId: 'demo-simulator',
  days: 30,
  createdAt: 1_800_000_000,
  nonce: Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]),
  fingerprintHash: Uint8Array.from([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]),
  ...overrides,
});

describe('typed codes', () => {
  it('give back every byte string they were made from', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 160 }), (bytes) => {
        expect(decodeTyped(encodeTyped(bytes))).toEqual(bytes);
      }),
      { numRuns: 300 },
    );
  });

  it('name the group of any one character typed wrong', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 8, maxLength: 120 }),
        fc.nat(),
        fc.integer({ min: 1, max: 31 }),
        (bytes, where, shift) => {
          const code = encodeTyped(bytes);
          const positions = [...code].map((c, i) => (c === '-' ? -1 : i)).filter((i) => i >= 0);
          const at = positions[where % positions.length] as number;
          const wrong = CROCKFORD[(CROCKFORD.indexOf(code.charAt(at)) + shift) % 32] as string;
          const typed = code.slice(0, at) + wrong + code.slice(at + 1);
          const group = code.slice(0, at).split('-').length;
          expect(() => decodeTyped(typed)).toThrow(TypedCodeError);
          try {
            decodeTyped(typed);
          } catch (error) {
            expect((error as TypedCodeError).group).toBe(group);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('forgive case, O for 0, I and L for 1, spaces and missing dashes', () => {
    const bytes = Uint8Array.from({ length: 40 }, (_, i) => (i * 37) % 256);
    const code = encodeTyped(bytes);
    const sloppy = code.toLowerCase().replace(/-/g, ' ').replace(/0/g, 'O').replace(/1/g, 'l');
    expect(decodeTyped(sloppy)).toEqual(bytes);
    expect(decodeTyped(code.replace(/-/g, ''))).toEqual(bytes);
  });

  it('refuse a code cut short, or a character that is none of the code’s', () => {
    const code = encodeTyped(Uint8Array.from({ length: 30 }, (_, i) => i));
    expect(() => decodeTyped(code.slice(0, -9))).toThrow(/does not check|cut short/);
    expect(() => decodeTyped(`${code.slice(0, 3)}U${code.slice(4)}`)).toThrow(/"U" in group 1/);
    expect(() => decodeTyped('')).toThrow(/empty/);
  });
});

describe('activation requests', () => {
  it('read back what they were written from', () => {
    expect(decodeRequest(encodeRequest(request()))).toEqual(request());
  });

  it('say what is wrong with a request cut short, of another kind or version, or with bytes too many', () => {
    const bytes = encodeRequest(request());
    expect(() => decodeRequest(bytes.slice(0, 20))).toThrow(/cut short/);
    expect(() => decodeRequest(Uint8Array.from([0x4c, 1, ...bytes.slice(2)]))).toThrow(
      /answer, not a activation request|not a/,
    );
    expect(() => decodeRequest(Uint8Array.from([0x52, 9, ...bytes.slice(2)]))).toThrow(/version 9/);
    expect(() => decodeRequest(Uint8Array.from([...bytes, 0]))).toThrow(/1 bytes too many/);
    expect(() => encodeRequest(request({ days: 0 }))).toThrow(ActivationFormatError);
    expect(() => encodeRequest(request({ days: 366 }))).toThrow(/1 to 365/);
  });
});
