import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

const OK = {
  OIDC_ISSUER: 'https://id.example.com/realms/ops',
  OIDC_CLIENT_ID: 'keyward',
  OIDC_CLIENT_SECRET: 'secret-value',
  OIDC_REDIRECT_URL: 'https://keyward.example.com/console/operator/sso/callback',
  OIDC_ROLE_MAP: 'kw-owners=owner, kw-admins=admin,kw-support=support,kw-auditors=auditor',
};

describe('single sign-on settings (OIDC_*)', () => {
  it('is off when no OIDC_* variable is set', () => {
    expect(loadConfig({}).sso).toBeUndefined();
    expect(loadConfig({ OIDC_ISSUER: '' }).sso).toBeUndefined();
  });

  it('reads a whole configuration, with the defaults for the claim and the scopes', () => {
    const sso = loadConfig(OK).sso;
    expect(sso).toMatchObject({
      issuer: OK.OIDC_ISSUER,
      clientId: 'keyward',
      redirectUrl: OK.OIDC_REDIRECT_URL,
      roleClaim: 'groups',
      scopes: 'openid email profile',
      allowHttp: false,
    });
    expect([...(sso?.roleMap ?? [])]).toEqual([
      ['kw-owners', 'owner'],
      ['kw-admins', 'admin'],
      ['kw-support', 'support'],
      ['kw-auditors', 'auditor'],
    ]);
    expect(loadConfig({ ...OK, OIDC_ROLE_CLAIM: 'roles', OIDC_SCOPES: 'openid groups' }).sso).toMatchObject({
      roleClaim: 'roles',
      scopes: 'openid groups',
    });
  });

  it('refuses to start on a partial or wrong configuration, naming the variable', () => {
    for (const name of [
      'OIDC_ISSUER',
      'OIDC_CLIENT_ID',
      'OIDC_CLIENT_SECRET',
      'OIDC_REDIRECT_URL',
      'OIDC_ROLE_MAP',
    ]) {
      expect(() => loadConfig({ ...OK, [name]: '' }), name).toThrow(new RegExp(`${name} must be set`));
    }
    expect(() => loadConfig({ OIDC_ROLE_CLAIM: 'groups' })).toThrow(/OIDC_ISSUER must be set/);
    expect(() => loadConfig({ ...OK, OIDC_ISSUER: 'not a url' })).toThrow(
      /OIDC_ISSUER must be an absolute URL/,
    );
    expect(() => loadConfig({ ...OK, OIDC_ISSUER: 'http://id.example.com' })).toThrow(
      /OIDC_ISSUER must be an https URL/,
    );
    expect(loadConfig({ ...OK, OIDC_ISSUER: 'http://127.0.0.1:9000' }).sso?.allowHttp).toBe(true);
    expect(() => loadConfig({ ...OK, OIDC_REDIRECT_URL: 'https://keyward.example.com/elsewhere' })).toThrow(
      /OIDC_REDIRECT_URL must be .*\/console\/operator\/sso\/callback/,
    );
    expect(() => loadConfig({ ...OK, OIDC_ROLE_MAP: 'kw-owners=root' })).toThrow(
      /OIDC_ROLE_MAP must be group=role/,
    );
    expect(() => loadConfig({ ...OK, OIDC_ROLE_MAP: 'owner' })).toThrow(/OIDC_ROLE_MAP must be group=role/);
    expect(() => loadConfig({ ...OK, OIDC_ROLE_MAP: 'a=owner,a=admin' })).toThrow(
      /OIDC_ROLE_MAP names the group "a" twice/,
    );
    expect(() => loadConfig({ ...OK, OIDC_SCOPES: 'email profile' })).toThrow(
      /OIDC_SCOPES must include openid/,
    );
  });

  it('never puts the client secret in an error', () => {
    try {
      loadConfig({ ...OK, OIDC_ROLE_MAP: 'x' });
    } catch (error) {
      expect(String(error)).not.toContain('secret-value');
    }
  });
});
