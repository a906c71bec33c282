export interface Success<T> {
  code: 0;
  message: 'success';
  data: T;
}

export interface Failure {
  code: string;
  message: string;
  cause: string;
  data?: unknown;
}

export function ok<T>(data: T): Success<T> {
  return { code: 0, message: 'success', data };
}

export function okNoData(): { code: 0; message: 'success' } {
  return { code: 0, message: 'success' };
}

export function failure(code: string, message: string, cause: string, data?: unknown): Failure {
  return data === undefined ? { code, message, cause } : { code, message, cause, data };
}

/** Business failures travel with HTTP 299 (DOMAIN.md §1). */
export const BUSINESS_FAILURE_STATUS = 299;
