#!/usr/bin/env node
// The `tokend` executable. Node 24 runs the TypeScript sources directly (type stripping), which it
// refuses to do under node_modules: use it from a checkout, directly or through `npm link`.
import { enableCompileCache } from 'node:module';

// From the second start on, modules come from Node's on-disk compile cache: no type stripping and no
// compiling, so start-up is faster and idle memory smaller (see bench/README.md, scenario 6).
enableCompileCache();
// Loading the CLI neither grows V8's young generation nor optimises code that runs once; the dispatcher
// releases the hold for the command (src/cli/start-up-hold.ts).
const { holdForStartUp } = await import('../src/cli/start-up-hold.ts');
holdForStartUp();
await import('../src/cli/main.ts');
