import { describe, expect, it } from 'vitest';
import { serializeError } from '../../src/http/log-serializers.js';

describe('error log serializer', () => {
  it('keeps kind, message and code, and drops the stack', () => {
    const error = Object.assign(new Error('relation missing'), { code: '42P01', detail: 'Key (secret)=(x)' });
    const logged = serializeError(error);
    expect(logged).toEqual({ type: 'Error', message: 'relation missing', code: '42P01' });
    expect(JSON.stringify(logged)).not.toContain('at ');
  });
});
