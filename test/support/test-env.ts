/**
 * Settings every test server starts with. All test files call from one address and, on PostgreSQL,
 * count in one database, so the token endpoint's per-address limit would be the whole suite's;
 * the tests of that limit set their own. Test servers send no webhooks unless a test asks: a worker
 * claims every due delivery it sees, other test files' too. Nor do their housekeeping runs prune
 * webhook events: tests write events dated years back (replay ranges, retention) on purpose.
 */
export const TEST_ENV: Record<string, string> = {
  TOKEN_RATE_PER_IP: '1000000',
  WEBHOOK_WORKER: '0',
  WEBHOOK_RETENTION_DAYS: '100000',
};
