/** Codes every surface shares (DOMAIN.md §1–2). */
export const CommonCode = {
  appTokenInvalid: '60000',
  userTokenInvalid: '60005',
  securityCheckFailed: '70001',
  internal: '500',
  notFound: '404',
  methodNotAllowed: '405',
  rateLimited: '429',
  /** Overload (DOMAIN.md §12): HTTP 503 with Retry-After, never "500". */
  overloaded: '503',
} as const;

export const commonMessages: Record<(typeof CommonCode)[keyof typeof CommonCode], string> = {
  '60000': 'application token check failed',
  '60005': 'invalid user login token',
  '70001': 'security check failed',
  '500': 'network error, retry',
  '404': 'not found',
  '405': 'method not allowed',
  '429': 'too many requests',
  '503': 'service busy, retry later',
};
