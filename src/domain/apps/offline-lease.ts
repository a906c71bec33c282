/**
 * The longest offline lease an operator may allow an app, in days: a year. Its own module so the
 * CLI checks the bound without loading the services.
 */
export const OFFLINE_LEASE_MAX_DAYS = 365;
