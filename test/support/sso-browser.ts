import type { Harness } from './harness.js';

/** What a page answered: enough for the tests to follow it. */
export interface Page {
  status: number;
  location: string | undefined;
  body: string;
  headers: Record<string, string>;
}

/**
 * A browser, as far as single sign-on needs one: a cookie jar per host, redirects followed by
 * hand, forms posted. Keyward (at `keywardOrigin`, the origin of OIDC_REDIRECT_URL) is reached
 * through inject; the provider over real HTTP.
 */
export class SsoBrowser {
  private readonly jars = new Map<string, Map<string, string>>();

  constructor(
    private readonly h: Harness,
    private readonly keywardOrigin: string,
  ) {}

  private jar(host: string): Map<string, string> {
    let jar = this.jars.get(host);
    if (jar === undefined) {
      jar = new Map();
      this.jars.set(host, jar);
    }
    return jar;
  }

  private keep(host: string, setCookies: string[]): void {
    const jar = this.jar(host);
    for (const line of setCookies) {
      const [pair = '', ...attributes] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      const gone =
        value === '' ||
        attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) ||
        attributes.some((a) => /^\s*expires=/i.test(a) && Date.parse(a.split('=')[1] ?? '') < Date.now());
      if (gone) jar.delete(name);
      else jar.set(name, value);
    }
  }

  cookie(host: string, name: string): string | undefined {
    return this.jar(host).get(name);
  }

  setCookie(host: string, name: string, value: string): void {
    this.jar(host).set(name, value);
  }

  private header(host: string): string {
    return [...this.jar(host)].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async request(url: string, form?: Record<string, string>): Promise<Page> {
    const target = new URL(url);
    const cookie = this.header(target.host);
    if (target.origin === this.keywardOrigin) {
      const reply = await this.h.app.inject({
        method: form === undefined ? 'GET' : 'POST',
        url: `${target.pathname}${target.search}`,
        headers: {
          ...(cookie === '' ? {} : { cookie }),
          ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
        },
        ...(form === undefined ? {} : { payload: new URLSearchParams(form).toString() }),
      });
      const set = reply.headers['set-cookie'];
      this.keep(target.host, set === undefined ? [] : Array.isArray(set) ? set : [set]);
      const headers = Object.fromEntries(Object.entries(reply.headers).map(([k, v]) => [k, String(v)]));
      return { status: reply.statusCode, location: headers.location, body: reply.body, headers };
    }
    const response = await fetch(url, {
      method: form === undefined ? 'GET' : 'POST',
      redirect: 'manual',
      headers: {
        ...(cookie === '' ? {} : { cookie }),
        ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      ...(form === undefined ? {} : { body: new URLSearchParams(form).toString() }),
    });
    this.keep(target.host, response.headers.getSetCookie());
    const location = response.headers.get('location');
    return {
      status: response.status,
      location: location === null ? undefined : new URL(location, url).href,
      body: await response.text(),
      headers: Object.fromEntries(response.headers),
    };
  }

  /**
   * Starts single sign-on at Keyward and goes through the provider as `login` (its login page,
   * then its consent page), stopping at the URL the provider sends the browser back to Keyward
   * with (not opened, so a test can open it as it likes).
   */
  async throughProvider(login: string): Promise<string> {
    let page = await this.request(`${this.keywardOrigin}/console/operator/sso`);
    if (page.status !== 303 || page.location === undefined) {
      throw new Error(`single sign-on did not start: ${page.status} ${page.body.slice(0, 300)}`);
    }
    let url = page.location;
    for (let step = 0; step < 20; step += 1) {
      if (url.startsWith(this.keywardOrigin)) return url;
      page = await this.request(url);
      if (page.location !== undefined) {
        url = page.location;
        continue;
      }
      const action = /<form[^>]*action="([^"]+)"[^>]*method="post"/.exec(page.body)?.[1];
      const prompt = /name="prompt" value="([^"]+)"/.exec(page.body)?.[1];
      if (action === undefined || prompt === undefined) {
        throw new Error(`the provider answered ${page.status}: ${page.body.slice(0, 500)}`);
      }
      const form: Record<string, string> =
        prompt === 'login' ? { prompt, login, password: 'any' } : { prompt };
      page = await this.request(new URL(action.replace(/&amp;/g, '&'), url).href, form);
      if (page.location === undefined) throw new Error(`the provider's form answered ${page.status}`);
      url = page.location;
    }
    throw new Error('the provider never sent the browser back');
  }
}
