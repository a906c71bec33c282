import { isIPv4, isIPv6 } from 'node:net';

/**
 * The address a login's attempts are counted under. IPv4 addresses count one by one; an IPv6
 * address counts as its /64 network, the least a single subscriber is usually given, so that
 * walking through one's own addresses does not yield a fresh count at each guess. IPv4 written
 * as IPv6 (`::ffff:192.0.2.1`) is the IPv4 address.
 */
export function loginAddress(ip: string): string {
  const address = ip.split('%')[0] ?? '';
  if (isIPv4(address)) return address;
  if (!isIPv6(address)) return address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1] !== undefined && isIPv4(mapped[1])) return mapped[1];
  return `${ipv6Groups(address).slice(0, 4).join(':')}::/64`;
}

/** The eight groups of a valid IPv6 address, as lowercase hex without leading zeros. */
function ipv6Groups(address: string): string[] {
  // An embedded IPv4 tail (`::1.2.3.4`) is two groups.
  const withoutDots = address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_all, a, b, c, d) =>
    [((Number(a) << 8) | Number(b)).toString(16), ((Number(c) << 8) | Number(d)).toString(16)].join(':'),
  );
  const [head = '', tail] = withoutDots.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((group) => parseInt(group, 16).toString(16));
}
