/** The relay's own status page (`/relay` on a relay, docs/relay.md). */
export const relayEn = {
  'relay.title': 'Relay {relayId}',
  'relay.grant': 'Grant {grantId}, until {endsAt}',
  'relay.ended': 'The grant ended at {endsAt}: this relay gives no seats until a renewal is imported.',
  'relay.license': 'License',
  'relay.product': 'Product',
  'relay.granted': 'Seats granted',
  'relay.inUse': 'Seats in use',
  'relay.machines': 'Machines with a seat: {n}',
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
  'relay.machines': '占用席位的机器：{n}',
  'relay.verify': '本中继签发的租约以厂商公钥验证，公钥发布于 /.well-known/jwks.json。',
};
