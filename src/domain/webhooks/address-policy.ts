import { BlockList, isIP } from 'node:net';

// Addresses a webhook may not reach unless WEBHOOK_ALLOW_PRIVATE=1: this machine, the networks
// behind it, link-local (where cloud metadata answers, 169.254.169.254) and addresses that are
// not meant to be reached at all. Checked on the addresses a name resolves to, at every attempt.
const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128], // unspecified
  ['::1', 128],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated, still routable inside)
  ['ff00::', 8], // multicast
  ['64:ff9b::', 96], // NAT64: an IPv4 address in disguise
  ['2002::', 16], // 6to4: likewise
] as const) {
  blocked.addSubnet(net, bits, 'ipv6');
}

/** An IPv4 address written as IPv6 (::ffff:a.b.c.d or ::ffff:7f00:1), as IPv4; else undefined. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:0{0,4}:){0,5}:?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const hi = parseInt(hex[1] as string, 16);
    const lo = parseInt(hex[2] as string, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return undefined;
}

/** Whether an IP address is one a webhook may not reach without WEBHOOK_ALLOW_PRIVATE=1. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    if (v4 !== undefined) return blocked.check(v4, 'ipv4');
    return blocked.check(address, 'ipv6');
  }
  return true; // not an address at all: refuse rather than guess
}
