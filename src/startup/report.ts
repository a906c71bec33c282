import fs from 'node:fs';
import { text } from '../cli/printable.js';
import type { Config } from '../config.js';
import { embeddedClusterDir } from '../db/client.js';
import { bannerLines, postgresLocation, type BannerFacts } from './banner.js';

/** What `keyward serve` tells a person while it starts; nothing in JSON mode, where logs are read by tools. */
export interface StartupReport {
  opening(config: Config): void;
  migrating(): void;
  migrated(applied: string[]): void;
  ready(facts: BannerFacts): void;
}

export const silentReport: StartupReport = {
  opening: () => undefined,
  migrating: () => undefined,
  migrated: () => undefined,
  ready: () => undefined,
};

/** Progress lines, then the banner, written to `out` (stdout, in order with the pretty log lines). */
export function terminalReport(out: NodeJS.WritableStream, version: string): StartupReport {
  const say = (line: string) => out.write(`${line}\n`);
  return {
    opening(config) {
      say(text`Keyward ${version} starting`);
      if (config.databaseUrl !== undefined) {
        say(text`  connecting to PostgreSQL at ${postgresLocation(config.databaseUrl)}`);
      } else if (fs.existsSync(embeddedClusterDir(config.dataDir))) {
        say(text`  opening the embedded database in ${config.dataDir}`);
      } else {
        // initdb runs now: seconds of silence a person would take for a hang.
        say(text`  creating the embedded database in ${config.dataDir} (first start: a few seconds)`);
      }
    },
    migrating: () => say('  applying migrations…'),
    migrated: (applied) =>
      say(applied.length === 0 ? '  migrations: up to date' : `  migrations: applied ${applied.length}`),
    ready: (facts) => bannerLines(facts).forEach(say),
  };
}
