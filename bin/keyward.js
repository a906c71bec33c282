#!/usr/bin/env node
// Runs the TypeScript sources directly: no build step between `npm ci` and `npm start`.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
