import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTimeLimit, type DatabaseHandle, type Db } from '../../src/db/client.js';
import { TransactionTimeLimitError } from '../../src/db/time-limit.js';
import { openTestDatabase } from '../support/database.js';

// TRANSACTION_LIMIT_MS on both databases. pg_sleep makes a transaction outlast its limit
// whatever the speed of the machine: the limit is checked between statements.
let database: DatabaseHandle;
const table = sql.table(`time_limit_${randomBytes(4).toString('hex')}`);

beforeAll(async () => {
  database = await openTestDatabase();
  await sql`create table ${table} (id int primary key)`.execute(database.db);
});
afterAll(async () => {
  await sql`drop table ${table}`.execute(database.db);
  await database.close();
});

const slowTransaction = (id: number, db: Db = database.db) =>
  db.transaction().execute(async (trx) => {
    await sql`insert into ${table} (id) values (${id})`.execute(trx);
    await sql`select pg_sleep(0.1)`.execute(trx);
    await sql`insert into ${table} (id) values (${id + 1})`.execute(trx);
  });

async function stored(): Promise<number[]> {
  const result = await sql<{ id: number }>`select id from ${table} order by id`.execute(database.db);
  return result.rows.map((r) => r.id);
}

describe('the transaction time limit', () => {
  it('rolls back a transaction that holds its connection past the limit', async () => {
    const limited = withTimeLimit(database.db, 20);
    await expect(slowTransaction(10, limited)).rejects.toBeInstanceOf(TransactionTimeLimitError);
    expect(await stored()).toEqual([]);
    // The connection went back: the next caller gets it at once (on the embedded database, the only one).
    await sql`insert into ${table} (id) values (1)`.execute(limited);
    expect(await stored()).toEqual([1]);
  });

  it("does not limit the handle's own db (migrations)", async () => {
    await slowTransaction(20);
    expect(await stored()).toEqual([1, 20, 21]);
  });

  it('lets a transaction within its limit commit', async () => {
    await slowTransaction(30, withTimeLimit(database.db, 60_000));
    expect(await stored()).toEqual([1, 20, 21, 30, 31]);
  });
});
