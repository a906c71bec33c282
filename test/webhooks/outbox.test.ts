import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditRepository } from '../../src/domain/audit/audit.repository.js';
import { NO_REQUEST, operatorActor } from '../../src/domain/audit/audit-actions.js';
import { appIdOf } from '../http/audit-helpers.js';
import { createTestApp } from '../support/fixtures.js';
import { startHarness, type Harness } from '../support/harness.js';
import { assetWorld, buyAsset, setLocked, type AssetWorld } from '../support/order-fixtures.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOW_PRIVATE: '1' });
});
afterAll(async () => {
  await h.close();
});

async function endpointFor(appKey: string, eventTypes?: string[]): Promise<string> {
  const appId = await appIdOf(h, appKey);
  const created = await h.app.services.webhookEndpoints.create(
    appId,
    { url: 'https://receiver.example/hook', ...(eventTypes === undefined ? {} : { eventTypes }) },
    { appId, operator: null, ...NO_REQUEST },
  );
  return created.id;
}

/** The events delivered to an endpoint, oldest first, with their data. */
async function eventsOf(endpointId: string) {
  return h.database.db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .select(['e.id', 'e.type', 'e.data', 'e.channels', 'e.request_id', 'd.status'])
    .where('d.endpoint_id', '=', endpointId)
    .orderBy('d.id')
    .execute();
}

describe('the outbox', () => {
  let world: AssetWorld;
  let mine: string;

  beforeAll(async () => {
    world = await assetWorld(h);
    mine = await endpointFor(world.app.appKey);
  });

  it('puts an event for each audited change of the app’s channels, with its scope and data', async () => {
    const num = await buyAsset(world);
    expect(await setLocked(world, [num], true)).toEqual([1]);
    const events = await eventsOf(mine);
    expect(events.map((e) => e.type)).toEqual(['order.accepted', 'asset.locked']);
    const [accepted, locked] = events;
    expect(accepted?.id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(accepted?.channels).toEqual([world.channel]);
    expect(accepted?.data).toMatchObject({ channelCode: world.channel, status: 'completed' });
    expect(accepted?.request_id).toEqual(expect.any(String));
    expect(locked?.data).toMatchObject({ assetNum: num, locked: true });
    expect(events.every((e) => e.status === 'pending')).toBe(true);
  });

  it('delivers to an app only the events of its own channels’ customers', async () => {
    const other = await createTestApp(h);
    const theirs = await endpointFor(other.appKey);
    const sameChannel = await createTestApp(h, { channels: [world.channel] });
    const alsoMine = await endpointFor(sameChannel.appKey, ['asset.unlocked']);
    const num = await buyAsset(world);
    await setLocked(world, [num], true);
    await setLocked(world, [num], false);
    expect(await eventsOf(theirs)).toEqual([]);
    // The filter: the other app of the channel asked for unlocks only.
    expect((await eventsOf(alsoMine)).map((e) => e.type)).toEqual(['asset.unlocked']);
  });

  it('gives each event of one call the channels of its own enterprise and customer', async () => {
    // A second enterprise in another channel, which the world's app is then given too.
    const second = await assetWorld(h);
    await h.database.db
      .updateTable('apps')
      .set({ channels: [world.channel, second.channel] })
      .where('app_key', '=', world.app.appKey)
      .execute();
    const [mineNum, theirsNum] = [await buyAsset(world), await buyAsset(second)];
    expect(await setLocked(world, [mineNum, theirsNum], true)).toEqual([1, 1]);
    const events = await h.database.db
      .selectFrom('webhook_events')
      .select(['data', 'channels', 'enterprise_id'])
      .where('type', '=', 'asset.locked')
      .where(sql<boolean>`data->>'assetNum' = any(${[mineNum, theirsNum]}::text[])`)
      .execute();
    const channelsOf = (num: string) => events.find((e) => (e.data as { assetNum: string }).assetNum === num);
    expect(channelsOf(mineNum)?.channels).toEqual([world.channel]);
    expect(channelsOf(theirsNum)?.channels).toEqual([second.channel]);
    expect(channelsOf(mineNum)?.enterprise_id).not.toBe(channelsOf(theirsNum)?.enterprise_id);
  });

  it('writes no event for a change that rolls back', async () => {
    const before = (await eventsOf(mine)).length;
    await expect(
      h.database.db.transaction().execute(async (trx) => {
        const customer = await trx
          .selectFrom('customers')
          .select('enterprise_id')
          .where('id', '=', world.customerId)
          .executeTakeFirstOrThrow();
        await new AuditRepository(trx).record(
          operatorActor({ requestId: 'rolled-back', clientRequestId: null }),
          [
            {
              action: 'member.deleted',
              subject: 'nobody',
              enterprise: { id: customer.enterprise_id as number },
              detail: { memberGlobalId: 'x' },
            },
          ],
        );
        // The event is there inside the transaction…
        const inside = await trx
          .selectFrom('webhook_events')
          .select('id')
          .where('request_id', '=', 'rolled-back')
          .execute();
        expect(inside).toHaveLength(1);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    // …and gone with it.
    const after = await h.database.db
      .selectFrom('webhook_events')
      .select('id')
      .where('request_id', '=', 'rolled-back')
      .execute();
    expect(after).toEqual([]);
    expect(await eventsOf(mine)).toHaveLength(before);
  });

  it('makes no event of an action outside the list', async () => {
    const before = (await eventsOf(mine)).length;
    await h.app.services.apps.rotateSecret(world.app.appKey, { revokeTokens: false });
    expect(await eventsOf(mine)).toHaveLength(before);
  });

  it('tells a disabled app of its disabling, and nothing after', async () => {
    const app = await createTestApp(h);
    const endpoint = await endpointFor(app.appKey);
    await h.app.services.apps.disable(app.appKey);
    const events = await eventsOf(endpoint);
    expect(events.map((e) => e.type)).toEqual(['app.disabled']);
    expect(events[0]?.data).toEqual({ appKey: app.appKey, previousStatus: 'active', tokensRevoked: true });
  });
});
