import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const NPM_NET = ['--no-audit', '--no-fund', '--prefer-offline', '--fetch-retries=5'];

export interface PackedClient {
  /** An empty project outside the repository, with the packed @keyward/client installed. */
  project: string;
  tarball: string;
  remove(): void;
}

/**
 * `npm pack` of packages/client (its prepack builds dist/), installed into a fresh project in the
 * system's temporary folder, as a vendor would install it: nothing of the repository is reachable
 * from there but what the tarball holds and its declared dependencies.
 */
export async function packAndInstallClient(): Promise<PackedClient> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-client-package-'));
  const { stdout } = await run('npm', ['pack', '--pack-destination', work, '--json'], {
    cwd: path.join(ROOT, 'packages/client'),
    maxBuffer: 16 * 1024 * 1024,
  });
  const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename: string }>;
  if (packed === undefined) throw new Error(`npm pack printed no file: ${stdout}`);
  const tarball = path.join(work, packed.filename);
  const project = path.join(work, 'vendor-app');
  fs.mkdirSync(project);
  fs.writeFileSync(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'vendor-app', version: '1.0.0', private: true, type: 'module' }),
  );
  await run('npm', ['install', ...NPM_NET, tarball], { cwd: project, maxBuffer: 16 * 1024 * 1024 });
  return { project, tarball, remove: () => fs.rmSync(work, { recursive: true, force: true }) };
}
