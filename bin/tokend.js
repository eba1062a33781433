#!/usr/bin/env node
// The `tokend` executable. Node 24 runs the TypeScript sources directly (type stripping), which it
// refuses to do under node_modules: use it from a checkout, directly or through `npm link`.
import '../src/cli/main.ts';
