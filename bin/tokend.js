#!/usr/bin/env node
// The `tokend` executable. Node 24 runs the TypeScript sources directly (type stripping), which it
// refuses to do under node_modules: use it from a checkout, directly or through `npm link`.
// Plain JavaScript that an older Node can parse, so that it can say which Node is needed: on Linux
// (x64, arm64) and Windows (x64), `npm ci` installs Node 24 into node_modules/.bin, which npm's scripts
// run on; elsewhere, or with --omit=optional, Node 24 must be the system's.
import { existsSync } from 'node:fs';
import module from 'node:module';
import { fileURLToPath } from 'node:url';

const MAJOR = 24;
if (Number(process.versions.node.split('.')[0]) < MAJOR) {
  const checkout = fileURLToPath(new URL('../node_modules/.bin/node', import.meta.url));
  process.stderr.write(
    `tokend: needs Node ${MAJOR} or newer, and ${process.execPath} is Node ${process.versions.node}; ` +
      (existsSync(checkout)
        ? `run it with the checkout's Node ${MAJOR}, ${checkout}, or through npm (npm start, npm run tokend -- …)\n`
        : `there is no ${checkout} (npm ci installs it on Linux x64 and arm64 and on Windows x64, unless --omit=optional): ` +
          `install Node ${MAJOR} (nodejs.org, or your system's packages)\n`),
  );
  process.exit(1);
}

// From the second start on, modules come from Node's on-disk compile cache: no type stripping and no
// compiling, so start-up is faster and idle memory smaller (see bench/README.md, scenario 6). The cache
// is in NODE_COMPILE_CACHE when that is set, else in the temporary directory.
module.enableCompileCache();
await import('../src/cli/main.ts');
