import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

// RUNTIME_SIGNING_KEY is read and checked once, at start: a key the server cannot sign with stops
// it there, with the variable named and its value (a secret) nowhere in the message.

const ed25519 = () => generateKeyPairSync('ed25519');
const configWith = (value: string) => loadConfig({ RUNTIME_SIGNING_KEY: value });

function refusal(value: string): string {
  try {
    configWith(value);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('the value was accepted');
}

describe('RUNTIME_SIGNING_KEY', () => {
  it('is unset by default, and when empty', () => {
    expect(loadConfig({}).runtimeSigningKey).toBeUndefined();
    expect(configWith('').runtimeSigningKey).toBeUndefined();
  });

  it('takes a PKCS#8 PEM of an Ed25519 key, also written on one line with \\n escapes', () => {
    const { privateKey } = ed25519();
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const jwk = privateKey.export({ format: 'jwk' });
    const expected = { kty: 'OKP', crv: 'Ed25519', x: jwk.x, d: jwk.d };
    expect(configWith(pem).runtimeSigningKey).toEqual(expected);
    expect(configWith(pem.trim().replace(/\n/g, '\\n')).runtimeSigningKey).toEqual(expected);
  });

  it("takes a private JWK's JSON", () => {
    const jwk = ed25519().privateKey.export({ format: 'jwk' });
    expect(configWith(JSON.stringify({ ...jwk, kid: 'mine' })).runtimeSigningKey).toEqual({
      kty: 'OKP',
      crv: 'Ed25519',
      x: jwk.x,
      d: jwk.d,
    });
  });

  it('refuses anything else, naming the variable and never showing the value', () => {
    const jwk = ed25519().privateKey.export({ format: 'jwk' });
    const values = [
      'not a key',
      generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs8' }),
      generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }),
      ed25519().publicKey.export({ format: 'pem', type: 'spki' }),
      JSON.stringify({ kty: 'OKP', crv: 'Ed25519', x: jwk.x }),
      // A secret with another key's public half.
      JSON.stringify({ ...jwk, x: ed25519().publicKey.export({ format: 'jwk' }).x }),
      '{"kty":"OKP",',
    ].map(String);
    for (const value of values) {
      const message = refusal(value);
      expect(message).toContain('RUNTIME_SIGNING_KEY');
      for (const line of value.split('\n').filter((l) => l.length >= 16)) expect(message).not.toContain(line);
      for (const part of [jwk.d, jwk.x]) expect(message).not.toContain(String(part));
    }
  });
});
