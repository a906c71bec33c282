import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enterpriseClient, operatorClient, type ConsoleClient } from '../support/console-client.js';
import { startHarness, uniqueCode, type Harness } from '../support/harness.js';
import { addMember, assetWorld, buyAsset, okData, type AssetWorld } from '../support/order-fixtures.js';

interface Listed {
  list: Array<{ globalId: string; name: string; userName: string; assetNums: string[] }>;
  total: number;
}

describe('enterprise console (inject)', () => {
  let h: Harness;
  let world: AssetWorld;
  let other: AssetWorld;
  let admin: ConsoleClient;

  beforeAll(async () => {
    h = await startHarness();
    world = await assetWorld(h);
    other = await assetWorld(h);
    admin = await enterpriseClient(h, world.admin.account, world.admin.password);
  });
  afterAll(async () => {
    await h?.close();
  });

  const members = async (w: AssetWorld, keyword = ''): Promise<Listed> =>
    okData(
      await w.admin.call(
        'GET',
        `/enterprise/${w.enterpriseGlobalId}/members?pageSize=500&keyword=${keyword}`,
      ),
    );

  it('refuses a post without the CSRF token with 403 and changes nothing', async () => {
    const userName = uniqueCode('u');
    const form = { userName, password: 'Secret-pass1', name: 'No Token', departmentId: '0' };
    const refused = await admin.post('/console/enterprise/members/new', form, { csrf: false });
    expect(refused.statusCode).toBe(403);
    const wrong = await admin.post(
      '/console/enterprise/members/new',
      { ...form, _csrf: 'x'.repeat(43) },
      { csrf: false },
    );
    expect(wrong.statusCode).toBe(403);
    expect((await members(world, userName)).total).toBe(0);
    const added = await admin.post('/console/enterprise/members/new', form);
    expect(added.statusCode, added.body).toBe(303);
    expect((await members(world, userName)).list.map((m) => m.name)).toEqual(['No Token']);
  });

  it('answers 404 to an operator session on an enterprise page', async () => {
    const operator = await operatorClient(h);
    for (const url of [
      '/console/enterprise',
      '/console/enterprise/assets',
      '/console/enterprise/lent-locks',
    ]) {
      expect((await operator.get(url)).statusCode, url).toBe(404);
    }
    const post = await operator.post('/console/enterprise/members/new', { userName: 'x' });
    expect(post.statusCode).toBe(404);
  });

  it('shows the sentence next to the field the failure is about, and its code only folded for support', async () => {
    const short = await admin.post('/console/enterprise/members/new', {
      userName: uniqueCode('u'),
      password: 'short',
      name: 'Shorty',
      departmentId: '0',
    });
    expect(short.statusCode).toBe(422);
    expect(short.body).toMatch(/id="field-password"[^>]*aria-invalid="true"/);
    expect(short.body).toContain(
      '<small id="field-password-error" class="field-error" data-code="50003">The password must be 8 to 16 characters long.</small>',
    );
    // The administrator reads the sentence; the code is in a detail a support person opens.
    expect(short.body).not.toContain('50003: ');
    expect(short.body).not.toMatch(/code 50003<\/span>\s*The password/);
    expect(short.body).toMatch(
      /<details class="error-code" data-code="50003"><summary>Details for support<\/summary><span class="code">code 50003<\/span><\/details>/,
    );
    expect(short.body).toContain('value="Shorty"');

    const badName = await admin.post('/console/enterprise/members/new', {
      userName: 'no-dashes',
      password: 'Secret-pass1',
      name: 'Dash',
      departmentId: '0',
    });
    expect(badName.body).toContain('id="field-userName-error" class="field-error" data-code="10003">');
    expect(badName.body).not.toContain('10003: ');

    const chinese = await admin.post(
      '/console/enterprise/members/new',
      {
        userName: uniqueCode('u'),
        password: 'Secret-pass1',
        name: 'X',
        departmentId: '0',
        passwordMobile: '12',
      },
      { headers: { 'accept-language': 'zh-CN' } },
    );
    expect(chinese.body).toContain('data-code="10004">手机号无效');
    expect(chinese.body).toContain(
      '<summary>技术支持所需详情</summary><span class="code">错误码 10004</span>',
    );

    const member = await addMember(world);
    const unknown = await admin.post(`/console/enterprise/members/${member.globalId}/assign`, {
      assetNum: 'NOPE-404',
    });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.body).toContain(
      'id="field-assetNum-error" class="field-error" data-code="60024">There is no such asset number in your enterprise.',
    );
  });

  it("answers 404 for another enterprise's member or asset in the URL, and changes nothing", async () => {
    const stranger = await addMember(other);
    const asset = await buyAsset(other);
    const ids = okData<Array<{ assetNum: string; assetId: string }>>(
      await other.admin.call('GET', `/enterprise/${other.enterpriseGlobalId}/asset/assetNums`),
    );
    const assetId = ids.find((a) => a.assetNum === asset)?.assetId as string;
    expect((await admin.get(`/console/enterprise/members/${stranger.globalId}`)).statusCode).toBe(404);
    expect((await admin.get(`/console/enterprise/assets/${assetId}`)).statusCode).toBe(404);
    const edit = await admin.post(`/console/enterprise/members/${stranger.globalId}/edit`, {
      name: 'Taken over',
    });
    expect(edit.statusCode).toBe(404);
    const remove = await admin.post(`/console/enterprise/members/${stranger.globalId}/delete`, {});
    expect(remove.statusCode).toBe(404);
    const theirs = (await members(other)).list.find((m) => m.globalId === stranger.globalId);
    expect(theirs?.name).not.toBe('Taken over');
    // Their asset cannot be assigned from here either: 60025, as through the API.
    const mine = await addMember(world);
    const assign = await admin.post(`/console/enterprise/members/${mine.globalId}/assign`, {
      assetNum: asset,
    });
    expect(assign.body).toContain('60025');
  });

  it('edits, resets a password and deletes an employee through the same services', async () => {
    const member = await addMember(world);
    const edited = await admin.post(`/console/enterprise/members/${member.globalId}/edit`, {
      name: 'Renamed',
      departmentId: '7',
      passwordMobile: '13800138000',
      remark: 'moved',
    });
    expect(edited.statusCode, edited.body).toBe(303);
    const listed = (await members(world)).list.find((m) => m.globalId === member.globalId);
    expect(listed?.name).toBe('Renamed');
    const reset = await admin.post(`/console/enterprise/members/${member.globalId}/password`, {
      password: 'Fresh-pass9',
    });
    expect(reset.statusCode).toBe(303);
    const removed = await admin.post(`/console/enterprise/members/${member.globalId}/delete`, {});
    expect(removed.headers.location).toBe('/console/enterprise?done=deleted');
    expect((await admin.get(`/console/enterprise/members/${member.globalId}`)).statusCode).toBe(404);
  });

  it('keeps the employee page under 150 KB with hundreds of employees, and pages them', async () => {
    const crowd = await assetWorld(h);
    for (let batch = 0; batch < 3; batch++) {
      const userList = Array.from({ length: 100 }, (_, i) => ({
        userName: `p${batch}x${i}${uniqueCode('')}`,
        password: 'Crowd-pass1',
        name: `Person ${batch}-${i} of the crowd`,
        departmentId: 3,
        passwordMobile: '13800138000',
      }));
      okData(await crowd.admin.call('POST', `/enterprise/${crowd.enterpriseGlobalId}/member`, { userList }));
    }
    const client = await enterpriseClient(h, crowd.admin.account, crowd.admin.password);
    const page = await client.get('/console/enterprise');
    expect(page.statusCode).toBe(200);
    expect(Buffer.byteLength(page.body)).toBeLessThan(150 * 1024);
    expect(page.body).toContain('Page 1 of 7 (301 in all)');
    const last = await client.get('/console/enterprise?page=7');
    expect(last.body).toContain('Person 2-99');
    const search = await client.get('/console/enterprise?q=Person%201-42');
    expect(search.body).toContain('Page 1 of 1 (1 in all)');
  });
});
