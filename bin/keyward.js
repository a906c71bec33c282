#!/usr/bin/env node
// Runs the TypeScript sources directly: no build step between `npm ci` and `npm start`.
import { register } from 'tsx/esm/api';

// The package's own tsconfig.json, wherever the command is run from: left to find one from the
// working directory, tsx compiles the console's JSX for another runtime, and every page fails.
register({ tsconfig: new URL('../tsconfig.json', import.meta.url).pathname });
await import('../src/cli/main.ts');
