import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { ACCESS, adminMay, isAccess, listenersOf, operatorMay } from '../../src/http/access/access.js';
import { declaredRoutes, installAccess, type Checks } from '../../src/http/access/enforce.js';

/** Checks that let everything through but record who was asked, and one that refuses. */
function recordingChecks(seen: string[]): Checks {
  const pass = (who: string) => async (_request: FastifyRequest, _reply: FastifyReply) => {
    seen.push(who);
  };
  return {
    public: pass('public'),
    app: async (_request, reply, access) => {
      seen.push(`app:${access.scope}`);
      return reply.code(401).send({ refused: access.scope });
    },
    runtime: pass('runtime'),
    member: pass('member'),
    admin: pass('admin'),
    metrics: pass('metrics'),
    'console-public': pass('console-public'),
    'console-shared': pass('console-shared'),
    'operator-sign-in': pass('operator-sign-in'),
    'console-session': pass('console-session'),
    'enterprise-session': pass('enterprise-session'),
    'operator-session': pass('operator-session'),
  };
}

function server(seen: string[], adminApart = false) {
  const app = Fastify();
  installAccess(app, {
    checks: recordingChecks(seen),
    adminApart,
    listenerOf: () => 'public',
    notHere: (_request, reply) => reply.code(404).send({ here: false }),
  });
  return app;
}

describe('access declarations', () => {
  it('refuses to start while a route declares no access, naming it', async () => {
    const app = server([]);
    app.get('/declared', { config: { access: ACCESS.public } }, async () => 'ok');
    app.post('/forgotten', async () => 'ok');
    await expect(app.ready()).rejects.toThrow(/POST \/forgotten/);
  });

  it('refuses a declaration it does not know', async () => {
    const app = server([]);
    app.get(
      '/odd',
      { config: { access: { who: 'app', scope: 'auth_everything' } as never } },
      async () => 'ok',
    );
    await expect(app.ready()).rejects.toThrow(/GET \/odd/);
    expect(isAccess({ who: 'root' })).toBe(false);
    expect(isAccess(ACCESS.order)).toBe(true);
    // The operator's routes name the permission a role must hold; none, or an unknown one, is refused.
    expect(isAccess({ who: 'admin' })).toBe(false);
    expect(isAccess({ who: 'admin', permission: 'everything' })).toBe(false);
    expect(isAccess({ who: 'operator-session' })).toBe(false);
    expect(isAccess(adminMay('read'))).toBe(true);
    expect(isAccess(operatorMay('audit'))).toBe(true);
  });

  it('checks the route a request matched, whatever the spelling of its path', async () => {
    const seen: string[] = [];
    const app = server(seen);
    app.get('/order/thing', { config: { access: ACCESS.order } }, async () => 'carried out');
    await app.ready();
    for (const url of ['/order/thing', '/%6Frder/thing', '/orde%72/%74hing']) {
      const response = await app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(401);
      expect(response.json()).toEqual({ refused: 'auth_order' });
    }
    // HEAD beside GET carries the same declaration.
    expect((await app.inject({ method: 'HEAD', url: '/%6Frder/thing' })).statusCode).toBe(401);
    expect(seen).toEqual(['app:auth_order', 'app:auth_order', 'app:auth_order', 'app:auth_order']);
    expect(declaredRoutes(app).map((r) => `${r.method} ${r.url} ${r.access.who}`)).toEqual([
      'GET /order/thing app',
      'HEAD /order/thing app',
    ]);
  });

  it('serves the operator’s routes on the admin listener alone when it has one', async () => {
    const app = server([], true);
    app.get('/admin/x', { config: { access: adminMay('read') } }, async () => 'secret');
    app.get('/assets/x', { config: { access: ACCESS.consoleShared } }, async () => 'css');
    await app.ready();
    expect((await app.inject({ method: 'GET', url: '/%61dmin/x' })).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: '/assets/x' })).statusCode).toBe(200);
    expect(listenersOf(operatorMay('read'))).toEqual(['admin']);
    expect(listenersOf(ACCESS.order)).toEqual(['public']);
    expect(listenersOf(ACCESS.consoleShared)).toEqual(['public', 'admin']);
  });
});
