import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { isLoopbackHost, loadConfig } from '../../src/config.js';
import { runProcess, startServerProcess, type ServerProcess } from '../support/server-process.js';

// Dockerfile, compose.yaml, its Caddyfile and the systemd unit cannot run here (no Docker daemon,
// no systemd): they are parsed and held to what matters (the Caddyfile by Caddy itself where it is
// installed), and the image's file tree is built the way the Dockerfile builds it
// (`npm ci --omit=dev`) and started.

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

interface Instruction {
  keyword: string;
  args: string;
}

/** Dockerfile instructions, continuation lines joined, comments and parser directives dropped. */
function dockerInstructions(text: string): Instruction[] {
  const joined = text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n')
    .replace(/\\\n/g, ' ');
  return joined
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => {
      const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
      return { keyword: keyword.toUpperCase(), args };
    });
}

/** The instructions of each stage, from its FROM on. */
function stages(instructions: Instruction[]): Instruction[][] {
  const result: Instruction[][] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') result.push([]);
    result.at(-1)?.push(instruction);
  }
  return result;
}

/** ENV in both forms: `ENV A=1 B=2` (values may be quoted). */
function envOf(stage: Instruction[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { args } of stage.filter((i) => i.keyword === 'ENV')) {
    for (const match of args.matchAll(/([A-Z_][A-Z0-9_]*)=("[^"]*"|\S+)/g)) {
      env[match[1] as string] = (match[2] as string).replace(/^"(.*)"$/, '$1');
    }
  }
  return env;
}

/** COPY sources and destination, without --from copies (those come from another stage). */
function copies(stage: Instruction[]): { sources: string[]; destination: string }[] {
  return stage
    .filter((i) => i.keyword === 'COPY' && !i.args.includes('--from='))
    .map((i) => {
      const parts = i.args.split(/\s+/).filter((p) => !p.startsWith('--'));
      return { sources: parts.slice(0, -1), destination: parts.at(-1) as string };
    });
}

const execForm = (args: string): string[] => JSON.parse(args) as string[];

const dockerfile = stages(dockerInstructions(read('Dockerfile')));
const finalStage = dockerfile.at(-1) ?? [];
const finalEnv = envOf(finalStage);
const newestLts = /^NEWEST_LTS=(\d+)$/m.exec(read('.ci/run'))?.[1];

describe('the Dockerfile', () => {
  it('is multi-stage: dependencies installed without dev packages in a stage of their own', () => {
    expect(dockerfile.length).toBeGreaterThanOrEqual(2);
    const builder = dockerfile[0] ?? [];
    expect(builder[0]?.args).toMatch(/ AS \w+/i);
    expect(builder.some((i) => i.keyword === 'RUN' && /npm ci\b.*--omit=dev/.test(i.args))).toBe(true);
    expect(finalStage.some((i) => i.keyword === 'RUN' && /npm (ci|install)/.test(i.args))).toBe(false);
  });

  it('runs on a Node.js line CI tests, as an unprivileged user', () => {
    for (const stage of dockerfile) {
      expect(stage[0]?.args).toMatch(new RegExp(`^node:${newestLts}-`));
    }
    const user = finalStage.filter((i) => i.keyword === 'USER').at(-1)?.args;
    expect(user).toBeDefined();
    expect(['root', '0', '0:0']).not.toContain(user);
  });

  it('serves on its exposed port, keeps DATA_DIR in a volume, and checks readiness', () => {
    expect(finalStage.find((i) => i.keyword === 'EXPOSE')?.args).toBe(finalEnv.PORT);
    expect(finalEnv.HOST).toBe('0.0.0.0');
    expect(execForm(finalStage.find((i) => i.keyword === 'VOLUME')?.args ?? '[]')).toEqual([
      finalEnv.DATA_DIR,
    ]);
    const health = finalStage.find((i) => i.keyword === 'HEALTHCHECK')?.args ?? '';
    expect(health).toMatch(/\/readyz/);
    expect(execForm(finalStage.find((i) => i.keyword === 'CMD')?.args ?? '[]')).toEqual([
      'node',
      'bin/keyward.js',
      'serve',
    ]);
  });

  it('copies only files that exist, and no secrets or local state', () => {
    const ignored = read('.dockerignore').split('\n');
    for (const entry of ['.git', 'node_modules', 'data', '.env']) expect(ignored).toContain(entry);
    for (const stage of dockerfile) {
      for (const { sources } of copies(stage)) {
        for (const source of sources) expect(fs.existsSync(path.join(ROOT, source)), source).toBe(true);
      }
    }
  });
});

describe('the image file tree, built as the Dockerfile builds it', () => {
  const tree = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-image-'));
  let server: ServerProcess | undefined;
  afterAll(async () => {
    await server?.stop();
    fs.rmSync(tree, { recursive: true, force: true });
  });

  it('installs without dev packages, starts, and passes its own health check', async () => {
    // Both stages' COPY instructions, into one tree: the dependencies stage's manifests, then npm
    // ci there, then the final stage's sources beside the node_modules it copies over.
    for (const stage of dockerfile) {
      for (const { sources, destination } of copies(stage)) {
        for (const source of sources) {
          const target =
            destination.endsWith('/') || destination === './' || sources.length > 1
              ? path.join(tree, destination, path.basename(source))
              : path.join(tree, destination);
          fs.cpSync(path.join(ROOT, source), target, { recursive: true });
        }
      }
      const install = stage.find((i) => i.keyword === 'RUN' && i.args.startsWith('npm ci'));
      if (install !== undefined) {
        const args = (install.args.split('&&')[0] ?? '').trim().split(/\s+/).slice(1);
        const result = await runProcess('npm', ['--prefix', tree, ...args], {});
        expect(result.code, result.stderr).toBe(0);
      }
    }
    expect(fs.existsSync(path.join(tree, 'node_modules/fastify'))).toBe(true);
    expect(fs.existsSync(path.join(tree, 'node_modules/vitest'))).toBe(false);
    expect(fs.existsSync(path.join(tree, 'node_modules/typescript'))).toBe(false);

    const dataDir = path.join(tree, 'var-lib-keyward');
    server = await startServerProcess(
      {
        ...finalEnv,
        DATA_DIR: dataDir,
        PORT: '0',
        ADMIN_PORT: '0',
        ...(process.env.DATABASE_URL === undefined ? {} : { DATABASE_URL: process.env.DATABASE_URL }),
      },
      path.join(tree, 'bin/keyward.js'),
    );
    const port = new URL(server.url).port;
    const health = execForm(
      finalStage.find((i) => i.keyword === 'HEALTHCHECK')?.args.replace(/^.*CMD /, '') ?? '[]',
    );
    const [command = '', ...args] = health;
    const check = await runProcess(command === 'node' ? process.execPath : command, args, { PORT: port });
    expect(check.code, check.stderr).toBe(0);
  }, 240_000);
});

describe('compose.yaml', () => {
  interface Service {
    build?: string;
    image?: string;
    command?: string;
    ports?: string[];
    volumes?: string[];
    environment?: Record<string, string>;
    depends_on?: Record<string, { condition: string }> | string[];
    healthcheck?: { test: string[] };
  }
  // Compose reads YAML merge keys (`<<: *keyward`): so must this parse.
  const compose = parseYaml(read('compose.yaml'), { merge: true }) as { services: Record<string, Service> };
  const services = Object.entries(compose.services);
  const instances = services.filter(([, s]) => s.build === '.');
  const postgres = services.find(([, s]) => s.image?.startsWith('postgres:'));
  const proxy = services.find(([, s]) => s.image?.startsWith('caddy:'));

  /** An instance's environment as Compose hands it over, `${…}` filled in, on top of the image's. */
  const environmentOf = (instance: Service): Record<string, string> => ({
    ...finalEnv,
    ...Object.fromEntries(
      Object.entries(instance.environment ?? {}).map(([name, value]) => [
        name,
        value.replace(/\$\{(\w+)(:[?-][^}]*)?\}/g, (_all, variable: string) =>
          variable === 'KEYWARD_ADMIN_KEY' ? 'k'.repeat(32) : '',
        ),
      ]),
    ),
  });

  it('runs two Keyward instances from the Dockerfile on one healthy PostgreSQL', () => {
    expect(instances.length).toBeGreaterThanOrEqual(2);
    expect(postgres).toBeDefined();
    const [pgName, pg] = postgres as [string, Service];
    expect(Number(/^postgres:(\d+)/.exec(pg.image ?? '')?.[1])).toBeGreaterThanOrEqual(14);
    expect(pg.healthcheck?.test).toContain('pg_isready');
    const env = pg.environment ?? {};
    for (const [, instance] of instances) {
      const url = new URL(instance.environment?.DATABASE_URL ?? '');
      expect(url.hostname).toBe(pgName);
      expect([url.username, url.password, url.pathname.slice(1)]).toEqual([
        env.POSTGRES_USER,
        env.POSTGRES_PASSWORD,
        env.POSTGRES_DB,
      ]);
      expect(instance.depends_on).toEqual({ [pgName]: { condition: 'service_healthy' } });
      // One admin key for all, required rather than defaulted.
      expect(instance.environment?.KEYWARD_ADMIN_KEY).toMatch(/^\$\{KEYWARD_ADMIN_KEY:\?/);
      // One runtime signing key for all when the operator sets one (empty means unset).
      expect(instance.environment?.RUNTIME_SIGNING_KEY).toBe('${RUNTIME_SIGNING_KEY:-}');
    }
  });

  it('publishes the proxy on the public port, and nothing else beyond the host’s loopback', () => {
    const [proxyName, caddy] = proxy as [string, Service];
    expect(caddy.ports).toEqual([`${finalEnv.PORT}:${finalEnv.PORT}`]);
    for (const [name, service] of services) {
      if (name === proxyName) continue;
      for (const port of service.ports ?? []) expect(port, name).toMatch(/^127\.0\.0\.1:/);
    }
  });

  it('configures the proxy by deploy/Caddyfile, mounted where the image reads it', () => {
    const [, caddy] = proxy as [string, Service];
    expect(caddy.command).toBeUndefined();
    expect(caddy.volumes).toEqual(['./deploy/Caddyfile:/etc/caddy/Caddyfile:ro']);
  });

  it('serves the admin API and operator console of one instance on this host’s loopback, and keeps the CLI’s address', () => {
    const published = instances.filter(([, s]) => (s.ports ?? []).length > 0);
    expect(published).toHaveLength(1);
    const [, console] = published[0] as [string, Service];
    // The instance's own reading of its environment: where its admin listener is.
    const listener = loadConfig(environmentOf(console)).adminListener;
    expect(listener).toBeDefined();
    // Published from the container's own address, so the listener must be on it.
    expect(isLoopbackHost(listener?.host ?? '')).toBe(false);
    expect(console.ports).toEqual([`127.0.0.1:${listener?.port}:${listener?.port}`]);
    for (const [name, instance] of instances) {
      const own = loadConfig(environmentOf(instance)).adminListener;
      // Every instance keeps the admin API off the public port, where `docker compose exec`'s
      // CLI finds it.
      expect(own, name).toBeDefined();
      expect(new URL(instance.environment?.KEYWARD_ADMIN_URL ?? '').port, name).toBe(String(own?.port));
      if (instance !== console) expect(isLoopbackHost(own?.host ?? ''), name).toBe(true);
    }
  });
});

/** The Caddyfile's tokens: words and braces, comments dropped (Caddy's own lexer has quotes too, unused here). */
function caddyTokens(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.replace(/(^|\s)#.*$/, ''))
    .join('\n')
    .split(/\s+/)
    .filter((token) => token !== '');
}

/** A Caddyfile block: its directive lines, each a list of tokens with a nested block or none. */
interface CaddyDirective {
  tokens: string[];
  block?: CaddyDirective[];
}

function caddyBlocks(text: string): CaddyDirective[] {
  const lines = text
    .split('\n')
    .map((line) => caddyTokens(line))
    .filter((tokens) => tokens.length > 0);
  let at = 0;
  const block = (): CaddyDirective[] => {
    const out: CaddyDirective[] = [];
    while (at < lines.length) {
      const tokens = lines[at++] as string[];
      if (tokens.join(' ') === '}') return out;
      if (tokens.at(-1) === '{') out.push({ tokens: tokens.slice(0, -1), block: block() });
      else out.push({ tokens });
    }
    return out;
  };
  return block();
}

describe('deploy/Caddyfile', () => {
  const text = read('deploy/Caddyfile');
  const [site, ...others] = caddyBlocks(text);
  const instanceNames = Object.entries(
    (parseYaml(read('compose.yaml'), { merge: true }) as { services: Record<string, { build?: string }> })
      .services,
  )
    .filter(([, s]) => s.build === '.')
    .map(([name]) => name);

  it('has balanced braces and one site, on the public port', () => {
    const tokens = caddyTokens(text);
    expect(tokens.filter((t) => t === '{').length).toBe(tokens.filter((t) => t === '}').length);
    expect(others).toEqual([]);
    expect(site?.tokens).toEqual([`:${finalEnv.PORT}`]);
  });

  it('proxies to every instance, sending calls only to ready ones', () => {
    const proxy = site?.block?.find((d) => d.tokens[0] === 'reverse_proxy');
    expect(proxy?.tokens.slice(1).sort()).toEqual(instanceNames.map((n) => `${n}:${finalEnv.PORT}`).sort());
    expect(proxy?.block?.find((d) => d.tokens[0] === 'health_uri')?.tokens[1]).toBe('/readyz');
  });

  // Debian's caddy package; CI installs it, so there this runs, never skips.
  const caddy = spawnSync('caddy', ['version']).status === 0;
  it.runIf(caddy || process.env.CI === 'true')(
    'is what Caddy itself reads the same way (caddy adapt)',
    async () => {
      const adapted = await runProcess(
        'caddy',
        ['adapt', '--config', path.join(ROOT, 'deploy/Caddyfile'), '--adapter', 'caddyfile', '--validate'],
        {},
      );
      expect(adapted.code, adapted.stderr).toBe(0);
      // Caddy warns of a file `caddy fmt` would change; it must have nothing to say but its log lines.
      expect(adapted.stderr).not.toMatch(/not formatted|warn/i);
      const config = JSON.parse(adapted.stdout) as {
        apps: {
          http: { servers: Record<string, { listen: string[]; routes: Array<{ handle: unknown[] }> }> };
        };
      };
      const servers = Object.values(config.apps.http.servers);
      expect(servers.map((s) => s.listen)).toEqual([[`:${finalEnv.PORT}`]]);
      const [handler] = servers[0]?.routes[0]?.handle as Array<{
        handler: string;
        upstreams: Array<{ dial: string }>;
        health_checks: { active: { uri: string } };
      }>;
      expect(handler?.handler).toBe('reverse_proxy');
      expect(handler?.upstreams.map((u) => u.dial).sort()).toEqual(
        instanceNames.map((n) => `${n}:${finalEnv.PORT}`).sort(),
      );
      expect(handler?.health_checks.active.uri).toBe('/readyz');
    },
  );
});

describe('the systemd unit', () => {
  const unit: Record<string, Record<string, string[]>> = {};
  let section = '';
  for (const line of read('deploy/keyward.service').split('\n')) {
    const header = /^\[(\w+)\]$/.exec(line.trim());
    if (header) unit[(section = header[1] as string)] = {};
    const entry = /^(\w+)=(.*)$/.exec(line.trim());
    if (entry && section !== '')
      ((unit[section] as Record<string, string[]>)[entry[1] as string] ??= []).push(entry[2] as string);
  }
  const service = unit.Service ?? {};

  it('runs `keyward serve` as its own user, restarted on failure, stopped by SIGTERM', () => {
    expect(service.ExecStart?.[0]).toMatch(/\/node bin\/keyward\.js serve$/);
    expect(service.User?.[0]).toBe('keyward');
    expect(service.Restart).toEqual(['on-failure']);
    expect(service.KillSignal).toEqual(['SIGTERM']);
    expect(unit.Install?.WantedBy).toEqual(['multi-user.target']);
  });

  it('keeps DATA_DIR in its private state directory, files created owner-only', () => {
    expect(service.Environment).toContain(`DATA_DIR=/var/lib/${service.StateDirectory?.[0]}`);
    expect(service.StateDirectoryMode).toEqual(['0700']);
    expect(service.UMask).toEqual(['0077']);
    expect(service.NoNewPrivileges).toEqual(['true']);
    expect(service.ProtectSystem).toEqual(['strict']);
  });
});
