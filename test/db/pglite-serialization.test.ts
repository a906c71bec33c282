import { PGlite } from '@electric-sql/pglite';
import { Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgliteDialect } from '../../src/db/pglite-dialect.js';

interface CounterDb {
  counter: { id: number; value: number };
}

let pglite: PGlite;
let db: Kysely<CounterDb>;

beforeAll(async () => {
  pglite = await PGlite.create();
  db = new Kysely<CounterDb>({ dialect: new PgliteDialect(pglite) });
  await sql`create table counter (id int primary key, value int not null)`.execute(db);
  await db.insertInto('counter').values({ id: 1, value: 0 }).execute();
});
afterAll(async () => {
  await db.destroy();
  await pglite.close();
});

describe('embedded database as a pool of one', () => {
  it('never interleaves 200 concurrent read-modify-write transactions', async () => {
    await Promise.all(
      Array.from({ length: 200 }, () =>
        db.transaction().execute(async (trx) => {
          const row = await trx
            .selectFrom('counter')
            .select('value')
            .where('id', '=', 1)
            .executeTakeFirstOrThrow();
          // Yield between the read and the write: an interleaving driver loses updates here.
          await new Promise((resolve) => setImmediate(resolve));
          await trx
            .updateTable('counter')
            .set({ value: row.value + 1 })
            .where('id', '=', 1)
            .execute();
        }),
      ),
    );
    const final = await db
      .selectFrom('counter')
      .select('value')
      .where('id', '=', 1)
      .executeTakeFirstOrThrow();
    expect(final.value).toBe(200);
  });

  it('rolls back a failed transaction and keeps serving', async () => {
    await expect(
      db.transaction().execute(async (trx) => {
        await trx.updateTable('counter').set({ value: -1 }).where('id', '=', 1).execute();
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const row = await db.selectFrom('counter').select('value').where('id', '=', 1).executeTakeFirstOrThrow();
    expect(row.value).toBe(200);
  });
});
