import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

// Scheduled backups are encrypted as `keyward backup`'s are: BACKUP_DIR needs BACKUP_PASSPHRASE, or
// BACKUP_ENCRYPT=0 said outright. Refused when the settings are read, so a server never starts
// writing a copy of every license and the signing keys in the clear unasked.
const SCHEDULED = { BACKUP_DIR: '/srv/keyward-backups', BACKUP_EVERY: '6h' };

describe('backup settings', () => {
  it('refuse scheduled backups with neither a passphrase nor BACKUP_ENCRYPT=0', () => {
    expect(() => loadConfig(SCHEDULED)).toThrow(
      'BACKUP_DIR: scheduled backups are encrypted; set BACKUP_PASSPHRASE, or BACKUP_ENCRYPT=0 to write them unencrypted',
    );
    expect(() => loadConfig({ ...SCHEDULED, BACKUP_PASSPHRASE: '' })).toThrow(/^BACKUP_DIR: /);
    expect(() => loadConfig({ ...SCHEDULED, BACKUP_ENCRYPT: '1' })).toThrow(/^BACKUP_DIR: /);
  });

  it('encrypt with BACKUP_PASSPHRASE, or write unencrypted with BACKUP_ENCRYPT=0, never both', () => {
    expect(loadConfig({ ...SCHEDULED, BACKUP_PASSPHRASE: 'correct horse' }).backup).toMatchObject({
      passphrase: 'correct horse',
      encrypt: true,
    });
    expect(loadConfig({ ...SCHEDULED, BACKUP_ENCRYPT: '0' }).backup).toMatchObject({
      passphrase: undefined,
      encrypt: false,
    });
    expect(() => loadConfig({ BACKUP_ENCRYPT: '0', BACKUP_PASSPHRASE: 'correct horse' })).toThrow(
      'BACKUP_ENCRYPT=0 and BACKUP_PASSPHRASE contradict each other: unset one of them',
    );
  });

  it('leave a server without scheduled backups as it was: encrypted by default, no passphrase needed yet', () => {
    expect(loadConfig({}).backup).toMatchObject({ dir: undefined, passphrase: undefined, encrypt: true });
  });
});
