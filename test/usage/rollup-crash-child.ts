import { openPostgres } from '../../src/db/client.js';
import { RollupService } from '../../src/domain/usage/rollup.service.js';

// A rollup run that stops inside its transaction, after writing the rollups and deleting the
// events, and waits there to be killed (kill -9 by rollup-instances.test.ts).
const url = process.env.DATABASE_URL;
if (url === undefined) throw new Error('DATABASE_URL');
const handle = await openPostgres(url);
const rollups = new RollupService(
  handle.db,
  { leaseRetentionDays: 90, hourlyRetentionDays: 7300, rollupRetentionDays: 7300 },
  {
    beforeCommit: async () => {
      process.stdout.write('in-transaction\n');
      await new Promise(() => undefined);
    },
  },
);
await rollups.run();
