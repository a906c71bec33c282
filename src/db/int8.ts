export const INT8_OID = 20;

/** Bigint columns hold ids, counters and epoch milliseconds, all below 2^53: read them as numbers. */
export const parseInt8 = (value: string): number => Number(value);
