// The server (the demo loader, `keyward token`, the lease claims it signs) uses the TypeScript
// client's source directly, as it runs its own: nothing to build between `npm ci` and `npm start`,
// wherever `keyward` is started from. Programs outside this repository install the built package.
export * from '../packages/client/src/index.js';
