// Opens backups for test/support/bounded-reader.ts, in a thread of its own: a file that made the
// reader loop forever (it once did, on a fraction of a byte) is stopped by ending this thread,
// which a timer on the test's own thread could never do while the loop held it.
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const { openBackup } = await import('../../src/domain/backup/backup-file.ts');

parentPort.on('message', async ({ id, file, passphrase, scratch }) => {
  try {
    const opened = await openBackup(file, passphrase, scratch);
    opened.dispose();
    parentPort.postMessage({ id, ok: true });
  } catch (error) {
    parentPort.postMessage({
      id,
      ok: false,
      message: String(error instanceof Error ? error.message : error),
    });
  }
});
parentPort.postMessage({ ready: true });
