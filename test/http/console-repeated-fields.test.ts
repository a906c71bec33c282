import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formFields } from '../../src/http/form-body.js';
import { enterpriseClient } from '../support/console-client.js';
import { startHarness, type Harness } from '../support/harness.js';
import {
  addMember,
  assetIdOf,
  assetWorld,
  assign,
  buyAsset,
  buyLentLock,
  listAssetNums,
  type AssetWorld,
} from '../support/order-fixtures.js';

// A form field given more than once is kept whole, in order: a form's ticked checkboxes all
// arrive (the lend form lent only the last of them), and a field that takes one value, given
// twice, is read as missing rather than as whichever came last.

let h: Harness;
let world: AssetWorld;
beforeAll(async () => {
  h = await startHarness();
  world = await assetWorld(h);
});
afterAll(async () => h.close());

describe('repeated form fields', () => {
  it('are kept as the list of their values, in order, a field given once as its text', () => {
    expect(formFields('a=1&b=2&a=3&a=4')).toEqual({ a: ['1', '3', '4'], b: '2' });
    expect(formFields('__proto__=x&constructor=y')).toEqual(
      Object.fromEntries([
        ['__proto__', 'x'],
        ['constructor', 'y'],
      ]),
    );
    expect(Object.getPrototypeOf(formFields('__proto__=x'))).toBe(Object.prototype);
  });

  it('lend every asset ticked on the lend form, not only the last', async () => {
    const lock = await buyLentLock(world);
    const assets = [await buyAsset(world), await buyAsset(world)];
    const member = await addMember(world);
    await assign(world, member.globalId, assets);
    const browser = await enterpriseClient(h, world.admin.account, world.admin.password);
    const ids = await Promise.all(assets.map((num) => assetIdOf(world, num)));
    const lent = await h.app.inject({
      method: 'POST',
      url: `/console/enterprise/members/${member.globalId}/lend`,
      headers: { cookie: browser.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams([
        ['_csrf', browser.csrf],
        ['lock', lock],
        ...ids.map((id): [string, string] => ['assetIds', id]),
      ]).toString(),
    });
    expect(lent.statusCode, lent.body.slice(0, 300)).toBeLessThan(400);
    const flags = (await listAssetNums(world)).filter((i) => assets.includes(i.assetNum));
    expect(flags.map((i) => i.borrowedFlag)).toEqual([true, true]);
  });

  it('refuse a token request naming its grant twice (RFC 6749: a parameter at most once)', async () => {
    const response = await h.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `grant_type=password&grant_type=client_credentials&client_id=${world.app.appKey}&client_secret=${world.app.appSecret}`,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: 'invalid_request' });
  });
});
