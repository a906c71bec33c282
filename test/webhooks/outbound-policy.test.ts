import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPrivateAddress } from '../../src/domain/webhooks/address-policy.js';
import { endpointUrlProblem } from '../../src/domain/webhooks/endpoint-url.js';
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
  it.each([
    '127.0.0.1',
    '127.9.9.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fd00::1',
    'fc00::1',
    'fe80::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:169.254.169.254',
    '64:ff9b::a9fe:a9fe',
    'not-an-address',
  ])('refuses %s', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111'])(
    'allows %s',
    (address) => {
      expect(isPrivateAddress(address)).toBe(false);
    },
  );
});

describe('the endpoint URL', () => {
  const policy = { allowHttp: false, allowPrivate: false };
  it.each([
    ['http://hooks.example.com/x', 'must be an https URL'],
    ['ftp://hooks.example.com/x', 'must be an https URL'],
    ['hooks.example.com/x', 'must be an absolute URL'],
    ['https://user:pw@hooks.example.com/x', 'must not carry a user name or password'],
    ['https://hooks.example.com/x#frag', 'must not have a fragment'],
    ['https://hooks.example.com/\u0007', 'must not contain control characters or spaces'],
    ['https://hooks.example.com/\u0085', 'must not contain control characters or spaces'],
    ['https://127.0.0.1/x', 'must not be a private, loopback or link-local address'],
    ['https://[::1]/x', 'must not be a private, loopback or link-local address'],
    ['https://169.254.169.254/latest/meta-data', 'must not be a private, loopback or link-local address'],
    ['https://localhost/x', 'must not be a local host name'],
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

describe('an attempt’s target, checked after resolving at every attempt', () => {
  it('refuses a loopback receiver without connecting to it', async () => {
    const before = receiver.received.length;
    const result = await postWebhook(`${receiver.url}/x`, {}, '{}', strict);
    expect(result).toMatchObject({
      ok: false,
      statusCode: null,
      error: 'host 127.0.0.1 resolves only to private, loopback or link-local addresses',
    });
    expect(receiver.received.length).toBe(before);
  });

  it('refuses a name that resolves to a private or metadata address', async () => {
    for (const address of ['10.0.0.5', '169.254.169.254', 'fd12::1']) {
      const result = await postWebhook('https://hooks.example.com/x', {}, '{}', strict, async () => [
        { address, family: address.includes(':') ? 6 : 4 },
      ]);
      expect(result.error).toBe(
        'host hooks.example.com resolves only to private, loopback or link-local addresses',
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
