import type { RuntimeCodeValue } from '../../../errors/runtime-codes.js';

/**
 * The license runtime's codes (src/errors/runtime-codes.ts) as the console says them, where a
 * page shows a refused check-out: `{0}`, `{1}` … are the values the runtime's message carried,
 * in its order. Keyed by the runtime's own table, so a code added there without its sentences
 * here does not compile.
 */
type RuntimeSentences = Record<`code.${RuntimeCodeValue}`, string>;

export const runtimeEn: RuntimeSentences = {
  'code.90000': 'A parameter was not valid.',
  'code.90001': 'No asset of this holder carries the product.',
  'code.90002': 'The asset carrying the product is disabled.',
  'code.90003': 'The license is not valid yet (from {0}).',
  'code.90004': 'The license ended (at {0}).',
  'code.90005': 'All {0} seats of the product are in use ({1} in use).',
  'code.90006': 'The product has used its {0} s of usage time ({1} s used).',
  'code.90007': 'The product has consumed its amount of {0} ({1} consumed, {2} asked).',
  'code.90008': 'No such lease.',
  'code.90009': 'The lease was revoked: {0}.',
  'code.90010': 'The lease expired.',
  'code.90011': 'Offline leases of {0} days are not allowed for this application (at most {1}).',
  'code.90012': 'This activation request was already answered.',
  'code.90013': 'This application does not allow early return: the seat stays held until the lease expires.',
  'code.90014': "This machine is not on the relay's list of machines.",
};

export const runtimeZh: RuntimeSentences = {
  'code.90000': '参数无效。',
  'code.90001': '此持有者的资产都不包含该产品。',
  'code.90002': '包含该产品的资产已被禁用。',
  'code.90003': '许可尚未生效（自 {0} 起生效）。',
  'code.90004': '许可已结束（于 {0}）。',
  'code.90005': '该产品的 {0} 个席位已全部占用（在用 {1} 个）。',
  'code.90006': '该产品的 {0} 秒使用时长已用完（已用 {1} 秒）。',
  'code.90007': '该产品的用量 {0} 已用完（已用 {1}，本次请求 {2}）。',
  'code.90008': '没有这个租约。',
  'code.90009': '租约已被撤销：{0}。',
  'code.90010': '租约已过期。',
  'code.90011': '此应用不允许 {0} 天的离线租约（最多 {1} 天）。',
  'code.90012': '此激活请求已经应答过。',
  'code.90013': '此应用不允许提前归还：席位一直占用到租约到期。',
  'code.90014': '此机器不在中继的机器名单上。',
};
