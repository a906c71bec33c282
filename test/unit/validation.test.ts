import { Ajv } from 'ajv';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { IntLike } from '../../src/http/schema-types.js';
import { fieldPath, formatValidationError, intLikeKeyword } from '../../src/http/validation.js';
import { loadConfig } from '../../src/config.js';
import { fillMessage } from '../../src/errors/keyward-error.js';

describe('field paths', () => {
  it('renders JSON pointers as the spec writes fields', () => {
    expect(fieldPath('/orderList/2/assets/0/products')).toBe('orderList[2].assets[0].products');
    expect(fieldPath('', 'size')).toBe('size');
    expect(fieldPath('/userList/3', 'userName')).toBe('userList[3].userName');
  });

  it('spells no path through a field without a name, so the message names the part', () => {
    expect(fieldPath('//0')).toBe('');
    expect(
      formatValidationError(
        [{ keyword: 'x-text', instancePath: '//0', schemaPath: '', params: {}, message: 'is bad' }],
        'querystring',
      ),
    ).toBe('querystring: is bad');
  });
});

describe('integer fields', () => {
  const ajv = new Ajv({ coerceTypes: false });
  intLikeKeyword(ajv);
  const validate = ajv.compile(
    Type.Object({ list: Type.Array(Type.Object({ sequence: IntLike({ minimum: 0 }) })) }),
  );

  it('accept numbers and digit strings, turning strings into numbers', () => {
    const data = { list: [{ sequence: '7' }, { sequence: 3 }] };
    expect(validate(data)).toBe(true);
    expect(data.list.map((x) => x.sequence)).toEqual([7, 3]);
  });

  it.each([true, 'x1', 1.5, null, [], '1e3'])('refuse %j naming the field', (value) => {
    expect(validate({ list: [{ sequence: value }] })).toBe(false);
    expect(formatValidationError(validate.errors ?? [], 'body')).toMatch(/^list\[0\]\.sequence: /);
  });
});

describe('configuration', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      region: 'cn',
      tokenTtlSeconds: 7200,
      rateLimitPerMinute: 60000,
    });
    expect(config.databaseUrl).toBeUndefined();
    expect(config.trustProxy).toBe(false);
  });

  it('reads TRUST_PROXY as a number of proxies or a list of their addresses', () => {
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: '0' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,::1' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
      '::1',
    ]);
    expect(() => loadConfig({ TRUST_PROXY: 'true' })).toThrow(/TRUST_PROXY/);
  });

  it('refuses bad values before the server starts', () => {
    expect(() => loadConfig({ REGION: 'us' })).toThrow(/REGION/);
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL/);
  });
});

describe('message templates', () => {
  it('fill {0} and {1}', () => {
    expect(fillMessage('password length must lie between {0} and {1}', 8, 16)).toBe(
      'password length must lie between 8 and 16',
    );
  });
});
