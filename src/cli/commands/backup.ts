import fs from 'node:fs';
import type { Command } from 'commander';
import { CliError } from '../admin-client.js';
import { printableJson, text } from '../printable.js';
import { examples } from '../program.js';

interface PassphraseOption {
  passphraseFile?: string;
}

interface BackupOptions extends PassphraseOption {
  includeAdminKey?: boolean;
  verify?: string;
  json?: boolean;
  /** Commander's `--no-encrypt`: false when it is given, true otherwise. */
  encrypt: boolean;
}

/**
 * The passphrase from --passphrase-file (its first line), else BACKUP_PASSPHRASE: never an
 * option's value, which every user of the machine sees in the process list.
 */
function passphraseOf(options: PassphraseOption, fromEnv: string | undefined): string | undefined {
  if (options.passphraseFile === undefined) return fromEnv;
  let content: string;
  try {
    content = fs.readFileSync(options.passphraseFile, 'utf8');
  } catch {
    throw new CliError(text`cannot read the passphrase file ${options.passphraseFile}`);
  }
  const line = content.split(/\r?\n/)[0] ?? '';
  if (line === '') throw new CliError(text`the passphrase file ${options.passphraseFile} is empty`);
  return line;
}

/**
 * How a new backup is sealed. It is encrypted unless --no-encrypt (or BACKUP_ENCRYPT=0) says
 * otherwise; with no passphrase it is refused rather than given a made-up one, which would be
 * printed where cron's mail or a CI log keeps it, or lost, and a backup nobody can open is found
 * out only on the day it is needed.
 */
function sealingOf(
  options: BackupOptions,
  config: { passphrase: string | undefined; encrypt: boolean },
): { passphrase: string | undefined; encrypt: boolean } {
  const passphrase = passphraseOf(options, config.passphrase);
  const encrypt = options.encrypt && config.encrypt;
  if (!encrypt && passphrase !== undefined) {
    const plain = options.encrypt ? 'BACKUP_ENCRYPT=0' : '--no-encrypt';
    const from =
      options.passphraseFile === undefined ? 'BACKUP_PASSPHRASE is set' : '--passphrase-file is given';
    throw new CliError(`${plain}, but ${from}: give one or the other`);
  }
  if (encrypt && passphrase === undefined) {
    throw new CliError(
      'a backup is encrypted (it holds every license and the signing keys): give its passphrase with ' +
        '--passphrase-file FILE or BACKUP_PASSPHRASE, or write it unencrypted with --no-encrypt',
    );
  }
  return { passphrase, encrypt };
}

async function verify(file: string, options: BackupOptions): Promise<void> {
  const { loadConfig } = await import('../../config.js');
  const { verifyBackup } = await import('../../domain/backup/restore.js');
  const { migrationLevel } = await import('../../domain/backup/manifest.js');
  const config = loadConfig();
  const report = await verifyBackup(
    file,
    passphraseOf(options, config.backup.passphrase),
    config.databaseUrl,
  );
  const { manifest } = report;
  if (options.json === true) {
    console.log(printableJson({ file, ok: true, tables: report.tables, rows: report.rows, manifest }));
    return;
  }
  console.log(
    text`${file}: whole, and restored into a scratch database it matches its manifest: ` +
      text`${report.tables} tables, ${report.rows} rows (Keyward ${manifest.keywardVersion}, ` +
      text`migration level ${migrationLevel(manifest.migrations)}, taken ${manifest.createdAt})`,
  );
}

async function backup(fileArgument: string | undefined, options: BackupOptions): Promise<void> {
  if (options.verify !== undefined) {
    if (fileArgument !== undefined) throw new CliError('give either FILE or --verify FILE, not both');
    if (!options.encrypt) throw new CliError('--no-encrypt is for writing a backup, not for --verify');
    await verify(options.verify, options);
    return;
  }
  const { loadConfig } = await import('../../config.js');
  const { backupFileName, writeWhole } = await import('../../domain/backup/write-file.js');
  const { checkWhole } = await import('../../domain/backup/backup-file.js');
  const config = loadConfig();
  process.umask(0o077);
  const file = fileArgument ?? backupFileName(new Date());
  const request = { includeAdminKey: options.includeAdminKey === true, ...sealingOf(options, config.backup) };
  const started = Date.now();
  /** The parts the file holds; the server leaves out what the credential may not carry away. */
  let parts: string[] | undefined;
  if (config.databaseUrl === undefined) {
    // Only the server opens the embedded database: it takes the snapshot and streams the file.
    // The partial file exists from the start, so a kill at any point leaves only it behind.
    const { adminDownload } = await import('../admin-download.js');
    const { BACKUP_PARTS_HEADER } = await import('../../http/admin/backup.js');
    async function* downloaded(): AsyncGenerator<Buffer> {
      const { body, headers } = await adminDownload('/backup', request);
      parts = headers.get(BACKUP_PARTS_HEADER)?.split(', ');
      for await (const chunk of body as AsyncIterable<Uint8Array>) {
        yield Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      }
    }
    await writeWhole(file, downloaded(), checkWhole);
  } else {
    // PostgreSQL: pg_dump runs here, with this machine's DATABASE_URL (docs/operations.md says why).
    const { openPostgres } = await import('../../db/client.js');
    const { BackupService, DATABASE_HOLDER } = await import('../../domain/backup/backup.service.js');
    const database = await openPostgres(config.databaseUrl);
    try {
      const service = new BackupService(database.db, {
        databaseUrl: config.databaseUrl,
        dataDir: config.dataDir,
      });
      // Whoever holds DATABASE_URL reads everything a backup holds already.
      const taken = await service.take({ ...request, roles: DATABASE_HOLDER });
      parts = taken.manifest.parts.map((p) => p.name);
      await writeWhole(file, taken.bytes);
    } finally {
      await database.close();
    }
  }
  const bytes = fs.statSync(file).size;
  const seconds = (Date.now() - started) / 1000;
  if (options.json === true) {
    console.log(printableJson({ file, bytes, seconds, encrypted: request.encrypt, parts }));
    return;
  }
  const sealed = request.encrypt ? 'encrypted' : 'unencrypted: anyone holding it can read and alter it';
  console.log(text`wrote ${file} (${bytes} bytes, ${sealed}) in ${seconds.toFixed(1)} s`);
  if (parts !== undefined && !parts.includes('runtime-keys.json')) {
    console.log(
      "it holds no runtime-keys.json (the runtime's signing keys): DATA_DIR has none, or the credential lacks the keys permission",
    );
  }
}

async function restore(file: string, options: PassphraseOption & { json?: boolean }): Promise<void> {
  const { loadConfig } = await import('../../config.js');
  const { restoreBackup } = await import('../../domain/backup/restore.js');
  const { migrationLevel } = await import('../../domain/backup/manifest.js');
  const config = loadConfig();
  process.umask(0o077);
  const report = await restoreBackup(file, passphraseOf(options, config.backup.passphrase), {
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
  });
  if (options.json === true) {
    console.log(printableJson({ file, tables: report.tables, rows: report.rows, files: report.files }));
    return;
  }
  const where =
    config.databaseUrl === undefined ? text`DATA_DIR ${config.dataDir}` : 'the database of DATABASE_URL';
  console.log(
    text`restored ${file} into ${where}: ${report.tables} tables, ${report.rows} rows, equal to the backup's ` +
      text`manifest (Keyward ${report.manifest.keywardVersion}, migration level ` +
      text`${migrationLevel(report.manifest.migrations)}, taken ${report.manifest.createdAt})`,
  );
  if (report.files.length > 0) console.log(text`and into DATA_DIR: ${report.files.join(', ')}`);
  console.log('Start the server (keyward serve) to serve it.');
}

const PASSPHRASE_HELP =
  'read the passphrase from the first line of this file (else BACKUP_PASSPHRASE); never given on the command line';

/** `keyward backup` and `keyward restore`; their code is loaded on use, so help stays quick. */
export function registerBackupCommands(program: Command): void {
  program
    .command('backup')
    .argument('[FILE]', 'where to write the backup (default: keyward-backup-<time>.kwbackup here)')
    .description('back up the database while the server runs, or check a backup with --verify')
    .option('--include-admin-key', 'put DATA_DIR/admin.key in the backup too (it opens the admin API)')
    .option('--passphrase-file <FILE>', `the passphrase the backup is encrypted with; ${PASSPHRASE_HELP}`)
    .option('--no-encrypt', 'write the backup unencrypted: without it a passphrase is required')
    .option('--verify <FILE>', 'restore FILE into a scratch database and compare its counts and checksums')
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      [
        '',
        'A backup is encrypted: give its passphrase (--passphrase-file or BACKUP_PASSPHRASE), or ask',
        'for an unencrypted one with --no-encrypt. On the embedded database the running server takes',
        'the backup (the admin API); on PostgreSQL this command runs pg_dump with DATABASE_URL. The',
        'file is written under a temporary name and renamed once whole, mode 0600. See',
        'docs/operations.md.',
        examples([
          'keyward backup --passphrase-file /etc/keyward/backup-passphrase',
          'keyward backup /backups/keyward.kwbackup --passphrase-file /etc/keyward/backup-passphrase',
          'keyward backup /backups/keyward.kwbackup --no-encrypt',
          'keyward backup --verify /backups/keyward.kwbackup --passphrase-file /etc/keyward/backup-passphrase',
        ]),
      ].join('\n'),
    )
    .action(backup);
  program
    .command('restore')
    .argument('<FILE>', 'the backup to restore')
    .description('restore a backup into an empty DATA_DIR or an empty database, with the server stopped')
    .option('--passphrase-file <FILE>', `the encrypted backup's passphrase: ${PASSPHRASE_HELP}`)
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      [
        '',
        'Checks the backup whole first and refuses one from a newer Keyward. The embedded database is',
        'restored into DATA_DIR, which must be empty; PostgreSQL into the database of DATABASE_URL,',
        'which must be empty (createdb). Counts and checksums are compared with the backup.',
        examples([
          'DATA_DIR=/srv/keyward-new keyward restore keyward-backup-20250131T120000Z.kwbackup',
          'DATABASE_URL=postgres://keyward@db/keyward_new keyward restore backup.kwbackup',
        ]),
      ].join('\n'),
    )
    .action(restore);
}
