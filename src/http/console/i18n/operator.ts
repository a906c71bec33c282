/** The operator area's words. Chinese beside English, key for key (checked by the type). */
export const operatorEn = {} as const;

export type OperatorKey = keyof typeof operatorEn;

export const operatorZh: Record<OperatorKey, string> = {};
