import { isEmbedded, type Db } from '../../db/client.js';
import { CallBatcher } from '../shared/call-batcher.js';
import { HeartbeatRepository, type Beat, type BeatVisit } from './heartbeat.repository.js';

/**
 * Heartbeats that arrive together share one statement and one commit (as the gate's checks do,
 * ADR 0010): a heartbeat is tiny, so a statement and a round trip of its own would cost the
 * server more than the work. Two statements may run at once on PostgreSQL, one on the embedded
 * database, which runs one statement at a time anyway. A round carries what arrived during the
 * one before, up to BEATS_PER_STATEMENT: when rounds fall behind (a check-out wave sharing the
 * commits' flushes) they grow, so one commit answers more beats and the backlog drains rather
 * than builds.
 */
const BEATS_PER_STATEMENT = 1000;
const IN_FLIGHT = { postgres: 2, embedded: 1 } as const;

export class HeartbeatBatcher {
  private readonly batcher: CallBatcher<BeatVisit, Beat | undefined>;

  constructor(db: Db) {
    const repository = new HeartbeatRepository(db);
    this.batcher = new CallBatcher(
      (visits) => beatInRounds(repository, visits),
      isEmbedded(db) ? IN_FLIGHT.embedded : IN_FLIGHT.postgres,
      BEATS_PER_STATEMENT,
    );
  }

  beat(visit: BeatVisit): Promise<Beat | undefined> {
    return this.batcher.submit(visit);
  }
}

/**
 * One statement per round of distinct leases: the same lease twice in a statement would be
 * updated once and answer once, so a repeat (one machine's heartbeats racing) waits for the next
 * round and sees the first one's result, as if they had come one after the other.
 */
async function beatInRounds(
  repository: HeartbeatRepository,
  visits: readonly BeatVisit[],
): Promise<Array<Beat | undefined>> {
  const answers: Array<Beat | undefined> = visits.map(() => undefined);
  let pending = visits.map((visit, at) => ({ visit, at }));
  while (pending.length > 0) {
    const seen = new Set<string>();
    const round: typeof pending = [];
    const later: typeof pending = [];
    for (const item of pending) {
      if (seen.has(item.visit.leaseId)) later.push(item);
      else {
        seen.add(item.visit.leaseId);
        round.push(item);
      }
    }
    const beats = await repository.beat(round.map((item) => item.visit));
    round.forEach((item, k) => {
      answers[item.at] = beats[k];
    });
    pending = later;
  }
  return answers;
}
