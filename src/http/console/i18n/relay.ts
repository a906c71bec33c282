/** The relay's own status page (`/relay` on a relay, docs/relay.md). */
export const relayEn = {
  'relay.title': 'Relay {relayId}',
  'relay.grant': 'Grant {grantId}, until {endsAt}',
  'relay.ended': 'The grant ended at {endsAt}: this relay gives no seats until a renewal is imported.',
  'relay.license': 'License',
  'relay.product': 'Product',
  'relay.granted': 'Seats granted',
  'relay.inUse': 'Seats in use',
  'relay.shares': 'Usage limits: used / granted',
  'relay.machines': 'Machines with a seat: {n}',
  'relay.terms': 'Machines that may check out: {machines}. Past the granted seats: {overage}.',
  'relay.anyMachine': 'any of this network',
  'relay.listedMachines': 'the {n} the grant lists',
  'relay.noOverage': 'refused',
  'relay.allowOverage': 'up to {n} more per product, reported to the vendor',
  'relay.verify':
    "Leases from this relay verify against the vendor's keys, published here at /.well-known/jwks.json.",
};

export const relayZh: Record<keyof typeof relayEn, string> = {
  'relay.title': '中继 {relayId}',
  'relay.grant': '授权 {grantId}，有效至 {endsAt}',
  'relay.ended': '授权已于 {endsAt} 结束：导入续期授权之前，本中继不再分配席位。',
  'relay.license': '许可',
  'relay.product': '产品',
  'relay.granted': '授权席位',
  'relay.inUse': '使用中席位',
  'relay.shares': '使用限额：已用 / 授权',
  'relay.machines': '占用席位的机器：{n}',
  'relay.terms': '可签出的机器：{machines}。超出授权席位：{overage}。',
  'relay.anyMachine': '本网络中的任何机器',
  'relay.listedMachines': '授权列出的 {n} 台',
  'relay.noOverage': '拒绝',
  'relay.allowOverage': '每个产品最多再多 {n} 个，并上报厂商',
  'relay.verify': '本中继签发的租约以厂商公钥验证，公钥发布于 /.well-known/jwks.json。',
};
