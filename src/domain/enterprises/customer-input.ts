import { KeywardError } from '../../errors/keyward-error.js';
import { OrderCode } from '../../errors/order-codes.js';

// A mainland mobile (1[3-9] and 9 digits) or E.164 (+, country code, number; 15 digits at most).
const MOBILE = /^(?:1[3-9][0-9]{9}|\+[1-9][0-9]{6,14})$/;

function invalid(message: string): KeywardError {
  return new KeywardError(OrderCode.validation, message);
}

/** A required name: trimmed, and blank is refused like a missing field. */
export function requiredText(field: string, value: string): string {
  const trimmed = value.trim();
  if (trimmed === '') throw invalid(`${field}: must not be blank`);
  return trimmed;
}

/**
 * An optional text field: absent, null and blank all mean "not given", because channel systems
 * send all three for the same thing; a given value is trimmed.
 */
export function optionalText(value: string | null | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

export function optionalMobile(field: string, value: string | null | undefined): string | undefined {
  const mobile = optionalText(value);
  if (mobile !== undefined && !MOBILE.test(mobile)) {
    throw invalid(
      `${field}: must be a mainland mobile number (1[3-9] and 9 digits) or E.164 (+country number)`,
    );
  }
  return mobile;
}
