import ipaddr from 'ipaddr.js';
import { isIP } from 'node:net';

// Which addresses a webhook may reach unless WEBHOOK_ALLOW_PRIVATE=1: public unicast ones only, not
// this machine, the networks behind it, link-local (where cloud metadata answers, 169.254.169.254),
// CGNAT, documentation, benchmarking, reserved or multicast ranges. The ranges come from ipaddr.js's
// `range()`, a maintained copy of the IANA special-purpose registries, rather than a list kept here
// that misses the next one. Checked on the addresses a name resolves to, at registration and at
// every attempt.
//
// An IPv6 address that carries an IPv4 address (IPv4-mapped, IPv4-translated, NAT64, 6to4, Teredo)
// reaches that IPv4 host through a translator or relay, so it is judged by the IPv4 address inside:
// 64:ff9b::7f00:1 is loopback. A public one stays allowed, as a host with only IPv6 and DNS64 gets
// 64:ff9b::a.b.c.d for every IPv4-only receiver.

/** The only block IANA hands out as global unicast IPv6 (RFC 4291 2.4); anything outside is special. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');
/** NAT64's well-known prefix (RFC 6052): the IPv4 address is the last 32 bits. */
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

function ipv4Of(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 255, low >> 8, low & 255]);
}

/** Why an IPv4 address is refused (its range's name), or undefined for a public unicast one. */
function ipv4Refusal(v4: ipaddr.IPv4): string | undefined {
  const range = v4.range();
  return range === 'unicast' ? undefined : range;
}

/** The IPv4 addresses an IPv6 address carries and reaches through, or undefined when it carries none. */
function embeddedIpv4(v6: ipaddr.IPv6, range: string): ipaddr.IPv4[] | undefined {
  const p = v6.parts as [number, number, number, number, number, number, number, number];
  switch (range) {
    case 'ipv4Mapped': // ::ffff:a.b.c.d
    case 'rfc6145': // ::ffff:0:a.b.c.d
      return [ipv4Of(p[6], p[7])];
    case 'rfc6052': // 64:ff9b::a.b.c.d; the local-use 64:ff9b:1::/48 puts it nowhere fixed
      return v6.match(NAT64_WELL_KNOWN) ? [ipv4Of(p[6], p[7])] : undefined;
    case '6to4': // 2002:AABB:CCDD::/48
      return [ipv4Of(p[1], p[2])];
    case 'teredo': // 2001:0:server:server:flags:port:~client:~client
      return [ipv4Of(p[2], p[3]), ipv4Of(~p[6] & 0xffff, ~p[7] & 0xffff)];
    default:
      return undefined;
  }
}

function ipv6Refusal(v6: ipaddr.IPv6): string | undefined {
  const range: string = v6.range();
  const inside = embeddedIpv4(v6, range);
  if (inside !== undefined) {
    const refused = inside.map(ipv4Refusal).find((r) => r !== undefined);
    return refused === undefined ? undefined : `${range} of ${refused}`;
  }
  if (range !== 'unicast') return range;
  // ipaddr.js calls unicast what no registry names, the deprecated IPv4-compatible ::a.b.c.d too.
  return v6.match(GLOBAL_UNICAST_V6) ? undefined : 'reserved';
}

/**
 * Why a webhook may not reach an IP address without WEBHOOK_ALLOW_PRIVATE=1, as the name of its
 * range (`loopback`, `private`, `6to4 of loopback` …), or undefined when it may.
 */
export function addressRefusal(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'not an address'; // refuse rather than guess
  const parsed = ipaddr.parse(address);
  return parsed.kind() === 'ipv4' ? ipv4Refusal(parsed as ipaddr.IPv4) : ipv6Refusal(parsed as ipaddr.IPv6);
}

/** Whether an IP address is one a webhook may not reach without WEBHOOK_ALLOW_PRIVATE=1. */
export function isPrivateAddress(address: string): boolean {
  return addressRefusal(address) !== undefined;
}
