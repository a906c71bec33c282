import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressRefusal, isPrivateAddress } from '../../src/domain/webhooks/address-policy.js';
import { endpointHostProblem, endpointUrlProblem } from '../../src/domain/webhooks/endpoint-url.js';
import { postWebhook, type OutboundPolicy } from '../../src/domain/webhooks/outbound.js';
import { startReceiver, type Receiver } from './receiver.js';

const strict: OutboundPolicy = {
  allowHttp: true,
  allowPrivate: false,
  connectTimeoutMs: 500,
  timeoutMs: 1000,
};

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
});

describe('which addresses a webhook may reach', () => {
  // Each refused range with the name ipaddr.js gives it; the embedding forms name the IPv4 range inside.
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['127.9.9.9', 'loopback'],
    ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['100.127.255.254', 'carrierGradeNat'],
    ['192.0.0.8', 'reserved'], // IETF protocol assignments
    ['192.0.2.1', 'reserved'], // TEST-NET-1
    ['198.51.100.7', 'reserved'], // TEST-NET-2
    ['203.0.113.9', 'reserved'], // TEST-NET-3
    ['198.18.0.1', 'reserved'], // benchmarking
    ['198.19.255.255', 'reserved'],
    ['192.88.99.1', 'reserved'], // the retired 6to4 relay anycast
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['224.0.0.1', 'multicast'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fc00::1', 'uniqueLocal'],
    ['fd00::1', 'uniqueLocal'],
    ['fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['fec0::1', 'deprecatedSiteLocal'],
    ['ff02::1', 'multicast'],
    ['100::1', 'discard'],
    ['2001:db8::1', 'reserved'], // documentation
    ['2001:2::1', 'benchmarking'],
    ['::7f00:1', 'reserved'], // IPv4-compatible, deprecated: outside 2000::/3
    ['::ffff:127.0.0.1', 'ipv4Mapped of loopback'],
    ['::ffff:7f00:1', 'ipv4Mapped of loopback'],
    ['::ffff:169.254.169.254', 'ipv4Mapped of linkLocal'],
    ['::ffff:0:a00:1', 'rfc6145 of private'],
    ['64:ff9b::7f00:1', 'rfc6052 of loopback'], // NAT64
    ['64:ff9b::a9fe:a9fe', 'rfc6052 of linkLocal'],
    ['64:ff9b::c000:201', 'rfc6052 of reserved'],
    ['64:ff9b:1::a00:1', 'rfc6052'], // local-use NAT64: the IPv4 address sits where the site chose
    ['2002:7f00:1::1', '6to4 of loopback'],
    ['2002:a9fe:a9fe::', '6to4 of linkLocal'],
    ['2002:6440:1::', '6to4 of carrierGradeNat'],
    // Teredo: server 65.54.227.120, client 127.0.0.1 stored inverted (80ff:fffe).
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'teredo of loopback'],
    // Server 10.0.0.1, client 8.8.8.8.
    ['2001:0:a00:1:8000:63bf:f7f7:f7f7', 'teredo of private'],
    ['not-an-address', 'not an address'],
  ])('refuses %s (%s)', (address, range) => {
    expect(addressRefusal(address)).toBe(range);
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '172.32.0.1',
    '100.128.0.1',
    '198.20.0.1',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808', // NAT64 of 8.8.8.8: how an IPv6-only host with DNS64 reaches an IPv4 receiver
    '2002:5db8:d822::1', // 6to4 of 93.184.216.34
    '2001:0:4136:e378:8000:63bf:f7f7:f7f7', // Teredo, server 65.54.227.120, client 8.8.8.8
  ])('allows %s', (address) => {
    expect(addressRefusal(address)).toBeUndefined();
    expect(isPrivateAddress(address)).toBe(false);
  });
});

/** What a refusal of a private address adds: the setting that admits one. */
const PRIVATE_HINT = '(WEBHOOK_ALLOW_PRIVATE=1 on the server admits it, for a local receiver)';
const PRIVATE = `must not be a private, loopback, link-local or reserved address ${PRIVATE_HINT}`;

describe('the endpoint URL', () => {
  const policy = { allowHttp: false, allowPrivate: false };
  it.each([
    [
      'http://hooks.example.com/x',
      'must be an https URL (WEBHOOK_ALLOW_HTTP=1 on the server admits http, for a local receiver)',
    ],
    ['ftp://hooks.example.com/x', 'must be an https URL'],
    ['hooks.example.com/x', 'must be an absolute URL'],
    ['https://user:pw@hooks.example.com/x', 'must not carry a user name or password'],
    ['https://hooks.example.com/x#frag', 'must not have a fragment'],
    ['https://hooks.example.com/\u0007', 'must not contain control characters or spaces'],
    ['https://hooks.example.com/\u0085', 'must not contain control characters or spaces'],
    ['https://127.0.0.1/x', PRIVATE],
    ['https://[::1]/x', PRIVATE],
    ['https://169.254.169.254/latest/meta-data', PRIVATE],
    ['https://[::ffff:7f00:1]/x', PRIVATE],
    ['https://[2002:7f00:1::1]/x', PRIVATE],
    ['https://[64:ff9b::7f00:1]/x', PRIVATE],
    ['https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/x', PRIVATE],
    ['https://192.0.2.1/x', PRIVATE],
    [`https://hooks.example.com/${'a'.repeat(2048)}`, 'must be at most 2048 characters'],
  ])('refuses %s', (url, problem) => {
    expect(endpointUrlProblem(url, policy)).toBe(problem);
  });

  it('takes an https URL, and http or a private address only when allowed', () => {
    expect(endpointUrlProblem('https://hooks.example.com/keyward?x=1', policy)).toBeUndefined();
    expect(
      endpointUrlProblem('http://127.0.0.1:9/x', { allowHttp: true, allowPrivate: true }),
    ).toBeUndefined();
  });
});

describe('the endpoint host, resolved at registration', () => {
  const policy = { allowHttp: false, allowPrivate: false };
  const resolvingTo =
    (...addresses: string[]) =>
    async () =>
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

  it('refuses a name that resolves only to refused addresses', async () => {
    expect(
      await endpointHostProblem('https://hooks.example.com/x', policy, resolvingTo('10.0.0.5', 'fd12::1')),
    ).toBe(
      'must name a host with a public address (hooks.example.com resolves only to private, loopback, ' +
        `link-local or reserved addresses: 10.0.0.5, fd12::1; ${PRIVATE_HINT.slice(1)}`,
    );
    expect(
      await endpointHostProblem('https://hooks.example.com/x', policy, resolvingTo('64:ff9b::a9fe:a9fe')),
    ).toMatch(/^must name a host with a public address/);
  });

  it('takes a name with one public address, and one that does not resolve (checked at each attempt)', async () => {
    const mixed = resolvingTo('10.0.0.5', '93.184.216.34');
    expect(await endpointHostProblem('https://hooks.example.com/x', policy, mixed)).toBeUndefined();
    const none = async () => {
      throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    };
    expect(await endpointHostProblem('https://hooks.example.com/x', policy, none)).toBeUndefined();
  });

  it('refuses localhost by what it resolves to, and a local name that does not resolve by its name', async () => {
    expect(await endpointHostProblem('https://localhost/x', policy, resolvingTo('127.0.0.1'))).toMatch(
      /^must name a host with a public address \(localhost resolves only to .*: 127\.0\.0\.1; WEBHOOK_ALLOW_PRIVATE=1 /,
    );
    const none = async () => [];
    expect(await endpointHostProblem('https://hooks.localhost/x', policy, none)).toBe(
      `must not be a local host name ${PRIVATE_HINT}`,
    );
    expect(await endpointHostProblem('https://localhost./x', policy, none)).toBe(
      `must not be a local host name ${PRIVATE_HINT}`,
    );
  });

  it('does not resolve under WEBHOOK_ALLOW_PRIVATE=1, nor an address', async () => {
    const never = async () => {
      throw new Error('must not be asked');
    };
    const open = { allowHttp: false, allowPrivate: true };
    expect(await endpointHostProblem('https://localhost/x', open, never)).toBeUndefined();
    expect(await endpointHostProblem('https://93.184.216.34/x', policy, never)).toBeUndefined();
  });
});

describe('an attempt’s target, checked after resolving at every attempt', () => {
  it('refuses a loopback receiver without connecting to it', async () => {
    const before = receiver.received.length;
    const result = await postWebhook(`${receiver.url}/x`, {}, '{}', strict);
    expect(result).toMatchObject({
      ok: false,
      statusCode: null,
      error: 'host 127.0.0.1 resolves only to private, loopback, link-local or reserved addresses',
    });
    expect(receiver.received.length).toBe(before);
  });

  it('refuses a name that resolves to a private or metadata address', async () => {
    for (const address of ['10.0.0.5', '169.254.169.254', 'fd12::1']) {
      const result = await postWebhook('https://hooks.example.com/x', {}, '{}', strict, async () => [
        { address, family: address.includes(':') ? 6 : 4 },
      ]);
      expect(result.error).toBe(
        'host hooks.example.com resolves only to private, loopback, link-local or reserved addresses',
      );
    }
  });

  it('connects to the address it checked, not to what the name resolves to later', async () => {
    const port = new URL(receiver.url).port;
    const resolved: string[] = [];
    const rebinding = async () => {
      // A rebinding resolver: one address the first time, another after.
      resolved.push('x');
      return [{ address: resolved.length === 1 ? '127.0.0.1' : '10.0.0.1', family: 4 }];
    };
    const before = receiver.received.length;
    const result = await postWebhook(
      `http://rebind.example:${port}/pinned`,
      {},
      '{}',
      { ...strict, allowPrivate: true },
      rebinding,
    );
    // Resolved once, and the request went to that address with the name as its Host.
    expect(resolved).toHaveLength(1);
    expect(result.ok).toBe(true);
    const hit = receiver.received.slice(before).find((r) => r.path === '/pinned');
    expect(hit?.headers.host).toBe(`rebind.example:${port}`);
  });

  it('refuses http unless allowed', async () => {
    const result = await postWebhook(`${receiver.url}/x`, {}, '{}', {
      ...strict,
      allowHttp: false,
      allowPrivate: true,
    });
    expect(result.error).toBe('the endpoint URL must be https (WEBHOOK_ALLOW_HTTP=1 allows http)');
  });

  it('gives up on a connection that is not made in time', async () => {
    // A non-routable address (TEST-NET-1): the connection hangs until the connect timeout.
    const result = await postWebhook('http://192.0.2.1:81/x', {}, '{}', {
      ...strict,
      allowPrivate: true,
      connectTimeoutMs: 200,
    });
    expect(result.error).toMatch(/^connection not made within 200 ms$|^request failed: E/);
  });
});
