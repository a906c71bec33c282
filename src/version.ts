import fs from 'node:fs';

/** The version in package.json: what `keyward --version`, the start banner and /admin/status say. */
export const VERSION = (
  JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
