import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../src/db/client.js';
import { batchOrder } from './checkout-storm.js';
import { freshNonce, measure, summarize, type Measured, type RequestShape } from './load.js';
import { heartbeat, startCopies, type RunningCopy } from './runtime.js';
import type { Session } from './session.js';

// One busy license: a site licence of many seats that every machine of a customer checks out at
// once. Seats are slot rows claimed with FOR UPDATE SKIP LOCKED (migration 0181), so a check-out
// should cost the same whether the license is empty or nearly full, and whether the other
// check-outs running beside it are of the same license or of others. The scenario measures:
//
// 1. rounds of check-outs of one license by `clients` at once, with no live lease on it, then
//    with `held` leases live (filled by checking out, then the next round measured);
// 2. the same round on one license and spread over `spread` licenses;
// 3. `storm` check-outs of one license of as many seats: how long, and exactly that many granted;
// 4. meanwhile, heartbeats of leases of other licenses: their latency (beside the same heartbeats'
//    with no check-out running, just before), and every one answered.
//
// Every license here is a lock of the target tenant with one product of `seats` seats. A license's
// first check-out makes its slot rows (one per seat); that check-out is made, and checked in,
// before any round is timed, so the rounds measure taking seats and not making them.

const RUNTIME = '/runtime/v1';

export interface BusySettings {
  seats: number;
  clients: number;
  round: number;
  held: readonly number[];
  spread: number;
  storm: number;
  beatClients: number;
  beatLeases: number;
  quietSeconds: number;
}

/** What a round of check-outs answered. */
export interface Round {
  measured: Measured;
  granted: number;
  refused: number;
  /** Answers other than a lease or 90005. */
  failed: number;
  firstFailure: string;
}

export interface BusyResult {
  /** Check-outs of one license, with no live lease, then with each of `held` live. */
  empty: Round;
  /** `target` leases meant to be live before the round, `live` those that were. */
  held: Array<{ target: number; live: number; round: Round }>;
  /** The same round on one fresh license and spread over `spread` fresh licenses. */
  one: Round;
  spread: Round;
  /** `storm` check-outs of one `storm`-seat license. */
  storm: Round;
  /** The same heartbeats for `quietSeconds` with no check-out running, just before the storm. */
  quietBeats: Measured;
  /** Heartbeats of other licenses' leases during the storm. */
  beats: Measured;
  /** Heartbeats answered other than HTTP 200 with code 0, and the first of them. */
  badBeats: number;
  firstBadBeat: string;
  /** Live leases of the storm's license after it, and whether one more check-out was refused. */
  stormLive: number;
  extraRefused: boolean;
  /** Licenses of this scenario holding more live leases than seats, after it. */
  overGranted: number;
  /** Check-outs of every round (fills and warm-up too) answered other than a lease, and the first. */
  unexpected: number;
  firstUnexpected: string;
}

interface License {
  assetNum: string;
  crmProductId: string;
}

async function runtimeCall(url: string, session: Session, path: string, body: unknown): Promise<string> {
  const response = await fetch(`${url}${RUNTIME}${path}?g_nonce=${freshNonce()}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${session.appToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return `${response.status} ${await response.text()}`;
}

/** Check-outs of `licenses` in turn by distinct machines, as the licensed program makes them. */
export function checkOuts(session: Session, licenses: readonly License[], tag: string): RequestShape {
  let next = 0;
  return {
    method: 'POST',
    path: () => `${RUNTIME}/leases`,
    headers: { authorization: `Bearer ${session.appToken}`, 'content-type': 'application/json' },
    body: () => {
      const license = licenses[next % licenses.length] as License;
      next += 1;
      return JSON.stringify({ ...license, fingerprint: `busy-${tag}-${next}` });
    },
  };
}

/** `amount` check-outs by `clients` at once, every answer sorted into granted, refused, failed. */
async function roundOf(
  url: string,
  session: Session,
  licenses: readonly License[],
  amount: number,
  clients: number,
): Promise<Round> {
  const counts = { granted: 0, refused: 0, failed: 0, firstFailure: '' };
  const shape: RequestShape = {
    ...checkOuts(session, licenses, randomBytes(4).toString('hex')),
    accept: (status, body) => {
      if (status === 200 && body.startsWith('{"code":0,')) counts.granted += 1;
      else if (body.includes('"code":"90005"')) counts.refused += 1;
      else {
        counts.failed += 1;
        counts.firstFailure ||= `HTTP ${status} ${body.slice(0, 200)}`;
      }
      // Counted here, so that a refusal or failure is reported rather than ending the run.
      return true;
    },
  };
  const measured = await measure(url, shape, { connections: clients, amount });
  return { measured, ...counts };
}

/** Live leases of a license, as the seats count them. */
async function liveOf(db: Db, license: License): Promise<RunningCopy[]> {
  const result = await sql<{ id: string; fingerprint: string }>`
    select l.id, l.fingerprint
      from runtime_leases l
      join assets a on a.id = l.asset_id
     where a.asset_num = ${license.assetNum} and l.ended_at is null and l.expires_at > now()`.execute(db);
  return result.rows.map((r) => ({ leaseId: r.id, fingerprint: r.fingerprint }));
}

/**
 * Heartbeats the license's live leases that would expire within two minutes, so that a slow
 * machine filling it keeps every seat it took (leases live RUNTIME_LEASE_SECONDS, 300 s). Runs
 * between rounds, never during one.
 */
async function keepLive(url: string, session: Session, db: Db, license: License): Promise<void> {
  const due = await sql<{ id: string; fingerprint: string }>`
    select l.id, l.fingerprint
      from runtime_leases l
      join assets a on a.id = l.asset_id
     where a.asset_num = ${license.assetNum} and l.ended_at is null
       and l.expires_at > now() and l.expires_at < now() + interval '120 seconds'`.execute(db);
  if (due.rows.length === 0) return;
  const copies = due.rows.map((r) => ({ leaseId: r.id, fingerprint: r.fingerprint }));
  await measure(url, heartbeat(session, copies), { connections: 20, amount: copies.length });
}

/** A license's slots made by one check-out, checked in again: no live lease, seats ready. */
export async function prime(url: string, session: Session, license: License): Promise<void> {
  const fingerprint = `busy-prime-${randomBytes(4).toString('hex')}`;
  const out = await runtimeCall(url, session, '/leases', { ...license, fingerprint });
  const leaseId = /"leaseId":"([^"]+)"/.exec(out)?.[1];
  if (leaseId === undefined) throw new Error(`busy: priming ${license.assetNum}: ${out.slice(0, 300)}`);
  const back = await runtimeCall(url, session, `/leases/${leaseId}/check-in`, { fingerprint });
  if (!back.startsWith('200 {"code":0,')) throw new Error(`busy: check-in: ${back.slice(0, 300)}`);
}

/** Closed-loop heartbeats by `clients`, each through its share of `copies`, until `until` settles. */
async function beatUntil(
  url: string,
  session: Session,
  copies: readonly RunningCopy[],
  clients: number,
  until: Promise<unknown>,
): Promise<{ measured: Measured; bad: number; firstBad: string }> {
  let over = false;
  const stop = () => {
    over = true;
  };
  until.then(stop, stop);
  const times: number[] = [];
  let bad = 0;
  let firstBad = '';
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      const mine = copies.filter((_c, i) => i % clients === client);
      for (let i = 0; !over; i += 1) {
        const copy = mine[i % mine.length] as RunningCopy;
        const sent = performance.now();
        const answer = await runtimeCall(url, session, `/leases/${copy.leaseId}/heartbeat`, {
          fingerprint: copy.fingerprint,
        }).catch((error: unknown) => `no answer ${String(error)}`);
        times.push(performance.now() - sent);
        if (!answer.startsWith('200 {"code":0,')) {
          bad += 1;
          firstBad ||= answer.slice(0, 200);
        }
      }
    }),
  );
  return { measured: summarize(times, (performance.now() - started) / 1000), bad, firstBad };
}

/** Licenses of this scenario (product ids tagged `tag`) holding more live leases than seats. */
async function overGranted(db: Db, crmProductId: string, seats: number): Promise<number> {
  const over = await sql<{ over: number }>`
    select count(*)::int as over from (
      select l.product_id
        from runtime_leases l
        join product_instances p on p.id = l.product_id
       where p.crm_product_id = ${crmProductId} and l.ended_at is null and l.expires_at > now()
       group by l.product_id
      having count(*) > ${seats}
    ) t`.execute(db);
  return over.rows[0]?.over ?? -1;
}

export async function runBusyLicense(
  url: string,
  session: Session,
  db: Db,
  settings: BusySettings,
  log: (message: string) => void,
): Promise<BusyResult> {
  // Every round's answers: no check-out here may be refused (no license fills) or fail.
  const rounds: Round[] = [];
  const round = async (licenses: readonly License[], amount: number): Promise<Round> => {
    const done = await roundOf(url, session, licenses, amount, settings.clients);
    rounds.push(done);
    return done;
  };
  const tag = randomBytes(4).toString('hex');
  const crmProductId = `BUSY-${tag}`;
  const lock = (name: string): License => ({ assetNum: `BY-${tag}-${name}`, crmProductId });
  const warm = lock('warm');
  const filled = lock('filled');
  const one = lock('one');
  const spread = Array.from({ length: settings.spread }, (_, i) => lock(`spread-${i}`));
  const storm = lock('storm');
  const all = [warm, filled, one, ...spread, storm];
  await batchOrder(
    url,
    session,
    all.map((l) => l.assetNum),
    {
      crmProductId,
      productUri: crmProductId,
      productName: 'Site licence',
      limitStartDate: Date.now() - 86_400_000,
      limitEndDate: Date.now() + 30 * 86_400_000,
      limitConcurrent: settings.seats,
    },
  );
  for (const license of all) await prime(url, session, license);
  log(`busy: ${all.length} licenses of ${settings.seats} seats, slots made`);

  // Warm-up (numbers dropped): the server's code and pool, and PostgreSQL's plans.
  await round([warm], settings.round);

  // (2) One license against the same load spread over many, both fresh.
  const oneRound = await round([one], settings.round);
  const spreadRound = await round(spread, settings.round);
  log(
    `busy: one license ${oneRound.measured.requestsPerSecond.toFixed(0)}/s, spread over ${settings.spread} ` +
      `${spreadRound.measured.requestsPerSecond.toFixed(0)}/s`,
  );

  // (1) One license as it fills: measured empty, then with each `held` count live.
  const empty = await round([filled], settings.round);
  const held: BusyResult['held'] = [];
  for (const target of settings.held) {
    const live = (await liveOf(db, filled)).length;
    if (target > live) await round([filled], target - live);
    await keepLive(url, session, db, filled);
    const before = (await liveOf(db, filled)).length;
    const measured = await round([filled], settings.round);
    held.push({ target, live: before, round: measured });
    log(
      `busy: one license with ${before} live leases ${measured.measured.requestsPerSecond.toFixed(0)}/s ` +
        `(empty ${empty.measured.requestsPerSecond.toFixed(0)}/s)`,
    );
  }

  // (3, 4) The storm on a fresh license, and heartbeats of other licenses' leases meanwhile.
  const copies: RunningCopy[] = [];
  const perLicense = Math.ceil(settings.beatLeases / 10);
  while (copies.length < settings.beatLeases) {
    copies.push(
      ...(await startCopies(url, session, Math.min(perLicense, settings.beatLeases - copies.length))),
    );
  }
  // The heartbeats' own latency on this machine, with nothing else running: what the storm adds
  // is the difference.
  const quiet = await beatUntil(
    url,
    session,
    copies,
    settings.beatClients,
    new Promise((resolve) => setTimeout(resolve, settings.quietSeconds * 1000)),
  );
  const stormDone = round([storm], settings.storm);
  const beats = await beatUntil(url, session, copies, settings.beatClients, stormDone);
  const stormRound = await stormDone;

  const stormLive = (await liveOf(db, storm)).length;
  const extra = await runtimeCall(url, session, '/leases', {
    ...storm,
    fingerprint: `busy-${tag}-one-more`,
  });
  const firstUnexpected = rounds.find((r) => r.refused + r.failed > 0);
  return {
    empty,
    held,
    one: oneRound,
    spread: spreadRound,
    storm: stormRound,
    quietBeats: quiet.measured,
    beats: beats.measured,
    badBeats: beats.bad + quiet.bad,
    firstBadBeat: beats.firstBad || quiet.firstBad,
    stormLive,
    extraRefused: extra.includes('"code":"90005"'),
    overGranted: await overGranted(db, crmProductId, settings.seats),
    unexpected: rounds.reduce((n, r) => n + r.refused + r.failed, 0),
    firstUnexpected:
      firstUnexpected === undefined
        ? ''
        : firstUnexpected.firstFailure || `${firstUnexpected.refused} refused (90005)`,
  };
}
