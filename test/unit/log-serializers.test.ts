import { describe, expect, it } from 'vitest';
import { redactUrl, serializeError } from '../../src/http/log-serializers.js';

describe('error log serializer', () => {
  it('keeps kind, message and code, and drops the stack', () => {
    const error = Object.assign(new Error('relation missing'), { code: '42P01', detail: 'Key (secret)=(x)' });
    const logged = serializeError(error);
    expect(logged).toEqual({ type: 'Error', message: 'relation missing', code: '42P01' });
    expect(JSON.stringify(logged)).not.toContain('at ');
  });
});

describe('request URL in logs', () => {
  it('redacts the values of credentials wrongly put in the query, keeping the rest', () => {
    expect(redactUrl('/oauth2/token?grant_type=client_credentials&client_secret=s3cret&client_id=kw_1')).toBe(
      '/oauth2/token?grant_type=client_credentials&client_secret=[redacted]&client_id=kw_1',
    );
    expect(redactUrl('/admin/apps?key=k&Access_Token=t&clientToken=c&usertoken=u&pass%77ord=p')).toBe(
      '/admin/apps?key=[redacted]&Access_Token=[redacted]&clientToken=[redacted]&usertoken=[redacted]&pass%77ord=[redacted]',
    );
    expect(redactUrl('/me/api/v1/x?g_nonce=abc&keyword=ann&token')).toBe(
      '/me/api/v1/x?g_nonce=abc&keyword=ann&token=[redacted]',
    );
    expect(redactUrl('/healthz')).toBe('/healthz');
  });
});
