/**
 * A failure that reaches the caller as an envelope: `code` comes from the surface's table
 * (common-codes, order-codes, member-codes), `message` is safe to show, `data` rides along only
 * where the spec says so (member op 1's partial failure).
 */
export class KeywardError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly options: {
      httpStatus?: number;
      data?: unknown;
      cause?: string;
      /** Sent as Retry-After: when a refused call (429) may be tried again. */
      retryAfterSeconds?: number;
    } = {},
  ) {
    super(message);
    this.name = 'KeywardError';
  }

  get httpStatus(): number {
    return this.options.httpStatus ?? 299;
  }
}

/** Fills `{0}`, `{1}` … in a message template, as the member-center messages are written. */
export function fillMessage(template: string, ...values: Array<string | number>): string {
  return template.replace(/\{(\d+)\}/g, (whole, index: string) => {
    const value = values[Number(index)];
    return value === undefined ? whole : String(value);
  });
}
