import { describe, expect, it } from 'vitest';
import { loginAddress } from '../../src/domain/members/login-source.js';

describe('the address login attempts are counted under', () => {
  it('keeps IPv4 addresses as they are, also when written as IPv6', () => {
    expect(loginAddress('192.0.2.7')).toBe('192.0.2.7');
    expect(loginAddress('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(loginAddress('::FFFF:192.0.2.7')).toBe('192.0.2.7');
  });

  it('counts an IPv6 address as its /64 network, however it is written', () => {
    const net = '2001:db8:1:2::/64';
    expect(loginAddress('2001:db8:1:2::1')).toBe(net);
    expect(loginAddress('2001:0DB8:0001:0002:ffff:0:0:9')).toBe(net);
    expect(loginAddress('2001:db8:1:2:aaaa:bbbb:cccc:dddd%eth0')).toBe(net);
    expect(loginAddress('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(loginAddress('::1')).toBe('0:0:0:0::/64');
    expect(loginAddress('2001:db8::')).toBe('2001:db8:0:0::/64');
    expect(loginAddress('64:ff9b::192.0.2.33')).toBe('64:ff9b:0:0::/64');
  });

  it('keeps anything else as given', () => {
    expect(loginAddress('')).toBe('');
    expect(loginAddress('not-an-address')).toBe('not-an-address');
  });
});
