/**
 * The console's first-party client, created by migration 0120: enterprise administrators sign in
 * through it, under the password grant's lockout and rate rules, keyed on this app like any other.
 */
export const CONSOLE_CLIENT_KEY = 'keyward-console';

/** The `operator` of changes made in the console's operator area. */
export const CONSOLE_OPERATOR = 'admin-console';
