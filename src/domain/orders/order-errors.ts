import { KeywardError } from '../../errors/keyward-error.js';
import { OrderCode } from '../../errors/order-codes.js';

/** `orderList[sequence=3]`: orders are named by their sequence, which the caller chose. */
export function orderPath(sequence: number): string {
  return `orderList[sequence=${sequence}]`;
}

/** A 13004 naming the field: `orderList[sequence=3].assets[0].assetNos[1]: belongs to another customer`. */
export function invalid(path: string, problem: string): KeywardError {
  const message = `${path}: ${problem}`;
  return new KeywardError(OrderCode.validation, message, { cause: message });
}

/** A data-dependent failure of one order, remembered so an async batch can mark that order. */
export class OrderFailure extends Error {
  constructor(
    readonly licenseOrderId: string,
    readonly failure: KeywardError,
  ) {
    super(failure.message);
    this.name = 'OrderFailure';
  }
}
