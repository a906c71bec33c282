/** The enterprise area's words. Chinese beside English, key for key (checked by the type). */
export const enterpriseEn = {} as const;

export type EnterpriseKey = keyof typeof enterpriseEn;

export const enterpriseZh: Record<EnterpriseKey, string> = {};
