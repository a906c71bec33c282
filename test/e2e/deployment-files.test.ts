import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { isLoopbackHost, loadConfig } from '../../src/config.js';
import { runProcess, startServerProcess, type ServerProcess } from '../support/server-process.js';

// Dockerfile, compose.yaml, its proxy's configuration and the systemd unit cannot run here (no
// Docker daemon, no systemd): they are parsed and held to what matters (the proxy's by HAProxy
// itself where it is installed; test/e2e/proxy-failover.test.ts runs it), and the image's file tree
// is built the way the Dockerfile builds it (`npm ci --omit=dev`) and started.

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
    // The console's pages render in the image too: its JSX is compiled with the tree's own
    // tsconfig.json, which the image must hold.
    const signIn = await fetch(`${server.url}/console/sign-in`);
    expect(signIn.status).toBe(200);
    expect(await signIn.text()).toContain('<form');
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
  const proxy = services.find(([, s]) => s.image?.startsWith('haproxy:'));

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
    const [proxyName, haproxy] = proxy as [string, Service];
    expect(haproxy.ports).toEqual([`${finalEnv.PORT}:${finalEnv.PORT}`]);
    for (const [name, service] of services) {
      if (name === proxyName) continue;
      for (const port of service.ports ?? []) expect(port, name).toMatch(/^127\.0\.0\.1:/);
    }
  });

  it('runs a pinned HAProxy, configured by deploy/haproxy.cfg mounted where the image reads it', () => {
    const [, haproxy] = proxy as [string, Service];
    // A version, not a floating tag: what runs is what was tested.
    expect(haproxy.image).toMatch(/^haproxy:\d+\.\d+\.\d+$/);
    expect(haproxy.command).toBeUndefined();
    expect(haproxy.volumes).toEqual(['./deploy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro']);
  });

  it('has every instance believe one proxy hop (TRUST_PROXY=1)', () => {
    for (const [name, instance] of instances) expect(environmentOf(instance).TRUST_PROXY, name).toBe('1');
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

/** An HAProxy section: its header's words (`backend keyward`) and its directives, each a list of words. */
interface HaproxySection {
  header: string[];
  directives: string[][];
}

/** HAProxy's configuration: sections start at column 0, their directives are indented; comments dropped. */
function haproxySections(text: string): HaproxySection[] {
  const sections: HaproxySection[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/(^|\s)#.*$/, '');
    const words = line
      .trim()
      .split(/\s+/)
      .filter((w) => w !== '');
    if (words.length === 0) continue;
    if (/^\S/.test(line)) sections.push({ header: words, directives: [] });
    else sections.at(-1)?.directives.push(words);
  }
  return sections;
}

describe('deploy/haproxy.cfg', () => {
  const text = read('deploy/haproxy.cfg');
  const sections = haproxySections(text);
  const section = (...header: string[]) =>
    sections.find((s) => s.header.join(' ') === header.join(' '))?.directives ?? [];
  /** Directives of the backend, then the defaults it inherits, by their first words. */
  const directive = (...words: string[]) =>
    [...section('backend', 'keyward'), ...section('defaults')].find((d) => words.every((w, i) => d[i] === w));
  const compose = parseYaml(read('compose.yaml'), { merge: true }) as {
    services: Record<string, { build?: string; image?: string }>;
  };
  const instanceNames = Object.entries(compose.services)
    .filter(([, s]) => s.build === '.')
    .map(([name]) => name);
  const image = Object.values(compose.services).find((s) => s.image?.startsWith('haproxy:'))?.image ?? '';

  it('serves HTTP on the public port, spread round robin over every instance', () => {
    expect(section('defaults')).toContainEqual(['mode', 'http']);
    expect(section('frontend', 'public')).toContainEqual(['bind', `:${finalEnv.PORT}`]);
    expect(section('frontend', 'public')).toContainEqual(['default_backend', 'keyward']);
    expect(directive('balance')).toEqual(['balance', 'roundrobin']);
    const servers = section('backend', 'keyward').filter((d) => d[0] === 'server');
    expect(servers.map((d) => d.slice(1, 3))).toEqual(instanceNames.map((n) => [n, `${n}:${finalEnv.PORT}`]));
  });

  it('sends calls only to ready instances (their /readyz)', () => {
    expect(directive('option', 'httpchk')).toEqual(['option', 'httpchk', 'GET', '/readyz']);
    expect(directive('http-check', 'expect')).toEqual(['http-check', 'expect', 'status', '200']);
    expect(directive('default-server')).toContain('check');
  });

  it('retries on the other instance only a call whose connection failed, never one an instance may have had', () => {
    // conn-failure alone: empty-response, response-timeout or a status would resend a request an
    // instance may have received and acted on (a consume counted twice).
    expect(directive('retry-on')).toEqual(['retry-on', 'conn-failure']);
    expect(Number(directive('retries')?.[1])).toBeGreaterThanOrEqual(1);
    // Each retry on another instance, not the one that refused.
    expect(directive('option', 'redispatch')).toEqual(['option', 'redispatch', '1']);
    // A fresh connection per request: none is sent on a kept-alive connection an instance may be closing.
    expect(directive('option', 'http-server-close')).toBeDefined();
    expect(directive('option', 'http-buffer-request')).toBeUndefined();
  });

  it('adds X-Forwarded-For and bounds every wait', () => {
    expect(directive('option', 'forwardfor')).toEqual(['option', 'forwardfor']);
    for (const timeout of ['connect', 'client', 'server', 'http-request', 'check']) {
      expect(directive('timeout', timeout), timeout).toHaveLength(3);
    }
  });

  // Debian's haproxy package; CI installs it, so there this runs, never skips.
  const installed = spawnSync('haproxy', ['-v']);
  const haproxy = installed.status === 0;
  it.runIf(haproxy || process.env.CI === 'true')(
    'is what HAProxy itself accepts (haproxy -c), on the branch compose.yaml pins',
    async () => {
      const checked = await runProcess('haproxy', ['-c', '-f', path.join(ROOT, 'deploy/haproxy.cfg')], {});
      expect(checked.code, checked.stderr).toBe(0);
      // Its only warnings: the instances' names, which resolve inside compose's network only (and
      // are looked up again there: init-addr none lets it start before they do).
      const warnings = `${checked.stdout}\n${checked.stderr}`
        .split('\n')
        .filter((l) => /WARNING|ALERT/.test(l));
      expect(warnings.map((l) => /could not resolve address '([^']+)'/.exec(l)?.[1] ?? l).sort()).toEqual(
        [...instanceNames].sort(),
      );
      // The tests run Debian's build; the image must be of the same branch (2.6 for 2.6.x).
      const version = /HAProxy version (\d+\.\d+)\./.exec(installed.stdout.toString())?.[1];
      expect(image.replace(/^haproxy:(\d+\.\d+)\..*$/, '$1')).toBe(version);
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
