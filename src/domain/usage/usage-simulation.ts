import type { Db } from '../../db/client.js';
import { AuditRepository, type PastAuditRow } from '../audit/audit.repository.js';
import { fillMessage } from '../../errors/keyward-error.js';
import { RuntimeCode, runtimeMessages } from '../../errors/runtime-codes.js';
import {
  UsageSimulationRepository,
  type SimulatedDenials,
  type SimulatedLicense,
  type SimulatedSeats,
} from './usage-simulation.repository.js';
import { UsageInputError } from './usage-range.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** Rows one insert writes: bounded statements however many licenses an enterprise has. */
const CHUNK = 4000;
/** Refused for lack of a seat: what a product at capacity turns away. */
const NO_SEAT = RuntimeCode.seatsInUse;
/** The holder's machines past his seats that are turned away, named as his desks. */
const EXTRA_MACHINES = 3;

export interface SimulationInput {
  enterpriseId: number;
  appId: string;
  days: number;
}

export interface SimulationResult {
  licenses: number;
  hours: number;
  denied: number;
  /** The product the simulation keeps at capacity (it is refused seats on busy days). */
  atCapacity: string | null;
}

/** A small seeded generator (mulberry32): the same enterprise's demo looks the same each run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * The license kept at capacity: limited seats nearest five, so its curve touches the line often;
 * one an employee holds first, so that who was refused has a name (a lock's refusals name none).
 */
function busiest(licenses: readonly SimulatedLicense[]): SimulatedLicense | undefined {
  return licenses
    .filter((l) => l.licensedSeats !== null && l.licensedSeats >= 2)
    .sort(
      (a, b) =>
        Number(a.holder === null) - Number(b.holder === null) ||
        Math.abs((a.licensedSeats ?? 0) - 5) - Math.abs((b.licensedSeats ?? 0) - 5),
    )[0];
}

/**
 * The audit rows of one hour's refusals of a license, as the runtime writes them when it turns a
 * machine away for lack of a seat: the holder (the employee the asset is assigned to, else the
 * lock itself), the code and its message, the product and the machine; marked simulated, so the
 * audit log tells them from real ones.
 */
function refusalsOf(
  license: SimulatedLicense,
  enterpriseId: number,
  hour: number,
  denied: number,
  next: () => number,
): PastAuditRow[] {
  const seats = license.licensedSeats ?? 0;
  const reason = fillMessage(runtimeMessages[NO_SEAT], seats, seats);
  const member = license.holder !== null;
  const rows: PastAuditRow[] = [];
  for (let i = 0; i < denied; i++) {
    const machine = seats + 1 + Math.floor(next() * EXTRA_MACHINES);
    rows.push({
      at: new Date(hour + Math.floor(next() * HOUR_MS)),
      action: 'lease.denied',
      subject: license.holder ?? license.assetNum,
      enterpriseId: member ? enterpriseId : null,
      detail: {
        code: NO_SEAT,
        reason,
        holderKind: member ? 'member' : 'lock',
        crmProductId: license.crmProductId,
        productUri: license.productUri,
        fingerprint: `DESK-${license.assetNum}-${machine}`,
        simulated: true,
      },
    });
  }
  return rows.sort((a, b) => a.at.getTime() - b.at.getTime());
}

/** How busy a working hour is: none at night and at weekends, highest early afternoon. */
function shapeOf(at: number): number {
  const date = new Date(at);
  const weekday = date.getUTCDay() >= 1 && date.getUTCDay() <= 5;
  const hour = date.getUTCHours();
  if (hour < 7 || hour > 18) return 0;
  const day = Math.sin((Math.PI * (hour - 6)) / 13);
  return weekday ? day : day * 0.15;
}

/**
 * A month (or `days`) of plausible usage for an enterprise's licenses, written as rollups: working
 * hours busy, nights and weekends quiet, a slow growth over the range, and one license over its
 * seats on busy days (refused check-outs, each with its audit row naming who was refused, as the
 * runtime writes one). The last hour is left to the rollup job, which counts
 * the real leases held now. Refused when the enterprise has usage history: a demo never mixes
 * simulated hours into a real customer's.
 */
export async function simulateUsage(
  db: Db,
  nowMs: number,
  input: SimulationInput,
): Promise<SimulationResult> {
  return db.transaction().execute(async (trx) => {
    const repository = new UsageSimulationRepository(trx);
    if (await repository.hasHistory(input.enterpriseId)) {
      throw new UsageInputError('enterprise', 'has usage history already; a simulation is for a new one');
    }
    const licenses = await repository.licenses(input.enterpriseId);
    const full = busiest(licenses);
    const end = Math.floor(nowMs / HOUR_MS) * HOUR_MS - HOUR_MS;
    const start = Math.floor((end - input.days * DAY_MS) / DAY_MS) * DAY_MS;
    const hours: SimulatedSeats[] = [];
    const days = new Map<string, SimulatedSeats>();
    const denials: SimulatedDenials[] = [];
    const refusals: PastAuditRow[] = [];
    licenses.forEach((license, index) => {
      const next = random(license.productId * 7919 + index);
      // The refusals' times and machines from a stream of their own: the curves stay as they were.
      const nextRefusal = random(license.productId * 104_729 + index);
      const seats = license.licensedSeats ?? 20;
      const level = license === full ? 1.35 : ([0.6, 0.35, 0.8, 0.2][index % 4] ?? 0.5);
      for (let at = start; at < end; at += HOUR_MS) {
        const growth = 0.8 + (0.35 * (at - start)) / (end - start);
        const demand = seats * level * shapeOf(at) * growth * (0.75 + 0.5 * next());
        const peak = Math.min(seats, Math.round(demand));
        const row: SimulatedSeats = {
          bucket: new Date(at),
          productId: license.productId,
          product: license.product,
          assetNum: license.assetNum,
          licensedSeats: license.licensedSeats,
          peakSeats: peak,
          seatMs: Math.round(peak * HOUR_MS * (0.55 + 0.35 * next())),
        };
        hours.push(row);
        const dayAt = Math.floor(at / DAY_MS) * DAY_MS;
        const key = `${license.productId}/${dayAt}`;
        const day = days.get(key);
        if (day === undefined) days.set(key, { ...row, bucket: new Date(dayAt) });
        else {
          day.peakSeats = Math.max(day.peakSeats, row.peakSeats);
          day.seatMs += row.seatMs;
        }
        const over = Math.round(demand) - seats;
        if (license.licensedSeats !== null && over > 0) {
          const denied = over + Math.floor(next() * 3);
          denials.push({ bucket: new Date(at), product: license.product, denied });
          refusals.push(...refusalsOf(license, input.enterpriseId, at, denied, nextRefusal));
        }
      }
    });
    for (let i = 0; i < hours.length; i += CHUNK) {
      await repository.insertSeats('hour', input.enterpriseId, input.appId, hours.slice(i, i + CHUNK));
    }
    const dayRows = [...days.values()];
    for (let i = 0; i < dayRows.length; i += CHUNK) {
      await repository.insertSeats('day', input.enterpriseId, input.appId, dayRows.slice(i, i + CHUNK));
    }
    await repository.insertDenials(input.enterpriseId, input.appId, Number(NO_SEAT), denials);
    for (let i = 0; i < refusals.length; i += CHUNK) {
      await new AuditRepository(trx).recordPast(input.appId, refusals.slice(i, i + CHUNK));
    }
    return {
      licenses: licenses.length,
      hours: hours.length,
      denied: denials.reduce((sum, d) => sum + d.denied, 0),
      atCapacity: full?.product ?? null,
    };
  });
}
