import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, startHarness, type Harness } from '../support/harness.js';
import { signedIn } from '../support/operator-console.js';

// The Operators page offers an owner no Disable and no role change on their own row (another
// owner's row has both), and the service refuses an operator disabling their own account however
// it is asked: a forged console post, or the admin API with their own token.

let h: Harness;
let me: Awaited<ReturnType<typeof signedIn>>;
let other: Awaited<ReturnType<typeof signedIn>>;
beforeAll(async () => {
  h = await startHarness();
  me = await signedIn(h, 'owner');
  other = await signedIn(h, 'owner');
});
afterAll(async () => h.close());

/** The table row of the operator with `email`, as the page has it. */
function rowOf(page: string, email: string): string {
  const start = page.indexOf(`<tr data-operator="${email}"`);
  expect(start, email).toBeGreaterThan(-1);
  return page.slice(start, page.indexOf('</tr>', start));
}

const statusOf = async (id: string) =>
  (await h.app.services.operators.list()).find((o) => o.id === id)?.status;

async function disabledRows(id: string): Promise<number> {
  const rows = await h.database.db
    .selectFrom('audit_log')
    .select('id')
    .where('action', '=', 'operator.disabled')
    .where((eb) => eb(eb.ref('detail', '->>').key('operatorId'), '=', id))
    .execute();
  return rows.length;
}

describe("an owner's own row on the Operators page", () => {
  it("offers no Disable and no role change on it, and both on another owner's", async () => {
    const page = (await me.browser.get('/console/operator/operators')).body;
    const own = rowOf(page, me.operator.email);
    expect(own).not.toContain(`/${me.operator.id}/disable`);
    expect(own).not.toContain('name="role"');
    const theirs = rowOf(page, other.operator.email);
    expect(theirs).toContain(`/console/operator/operators/${other.operator.id}/disable`);
    expect(theirs).toContain('name="role"');
  });

  it('refuses a forged post disabling oneself, naming why, and changes nothing', async () => {
    await me.browser.get('/console/operator/operators');
    const refused = await me.browser.post(`/console/operator/operators/${me.operator.id}/disable`, {});
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('You cannot disable your own account');
    expect(await statusOf(me.operator.id)).toBe('active');
    expect(await disabledRows(me.operator.id)).toBe(0);
    // Still signed in: the page opens.
    expect((await me.browser.get('/console/operator/operators')).statusCode).toBe(200);
  });

  it('refuses a role the form does not offer, naming the field, and changes nothing', async () => {
    const roleOf = async (id: string) =>
      (await h.app.services.operators.list()).find((o) => o.id === id)?.role;
    const audited = async () =>
      (
        await h.database.db
          .selectFrom('audit_log')
          .select('id')
          .where('operator_id', '=', me.operator.id)
          .where('action', '=', 'operator.role_set')
          .execute()
      ).length;
    const before = await audited();
    for (const role of ['superuser', '', 'Owner', 'owner ']) {
      await me.browser.get('/console/operator/operators');
      const refused = await me.browser.post(`/console/operator/operators/${other.operator.id}/role`, {
        role,
      });
      expect(refused.statusCode, JSON.stringify(role)).toBe(400);
      expect(refused.body).toContain('Choose one of the roles.');
      expect(await roleOf(other.operator.id)).toBe('owner');
    }
    expect(await audited()).toBe(before);
  });

  it("refuses the admin API disabling the caller's own operator, and lets another owner", async () => {
    const token = async (operatorId: string) => {
      const created = await h.app.inject({
        method: 'POST',
        url: `/admin/operators/${operatorId}/tokens`,
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
        payload: { name: 'own-row' },
      });
      return (created.json() as { token: string }).token;
    };
    const disable = async (bearer: string, id: string) =>
      h.app.inject({
        method: 'POST',
        url: `/admin/operators/${id}/disable`,
        headers: { authorization: `Bearer ${bearer}` },
      });
    const self = await disable(await token(me.operator.id), me.operator.id);
    expect(self.statusCode).toBe(409);
    expect(self.json()).toEqual({
      error: `${me.operator.email}: an operator cannot disable their own account; another owner can`,
    });
    expect(await statusOf(me.operator.id)).toBe('active');
    const byOther = await disable(await token(other.operator.id), me.operator.id);
    expect(byOther.statusCode).toBe(200);
    expect(await statusOf(me.operator.id)).toBe('disabled');
  });
});
