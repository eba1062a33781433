#!/usr/bin/env node
// The `tokend` executable. Node 24 runs the TypeScript sources directly (type stripping), which it
// refuses to do under node_modules: use it from a checkout, directly or through `npm link`.
// Plain JavaScript that an older Node can parse, so that it can say which Node is needed.
import module from 'node:module';

const MAJOR = 24;
if (Number(process.versions.node.split('.')[0]) < MAJOR) {
  process.stderr.write(
    `tokend: needs Node ${MAJOR} or newer, and ${process.execPath} is Node ${process.versions.node}; ` +
      `run this file with a Node ${MAJOR} binary (\`node bin/node24.js --bin-dir\` prints the directory of one), ` +
      `or as \`node bin/node24.js bin/tokend.js …\`\n`,
  );
  process.exit(1);
}

// From the second start on, modules come from Node's on-disk compile cache: no type stripping and no
// compiling, so start-up is faster and idle memory smaller (see bench/README.md, scenario 6). The cache
// is in NODE_COMPILE_CACHE when that is set, else in the temporary directory.
module.enableCompileCache();
await import('../src/cli/main.ts');
