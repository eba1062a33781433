// The ceiling of scenario 2: the same bcrypt binding verifying the same hash (same cost) in a loop,
// CONCURRENCY verifications in flight, no HTTP and no database. Prints one JSON line.
//
//   node bench/bcrypt-ceiling.ts --concurrency 8 --seconds 10
import { parseArgs } from 'node:util';
import { hash, verify } from '@node-rs/bcrypt';
import { md5Hex } from '../src/users/passwords.ts';
import { BENCH_BCRYPT_COST, BENCH_PASSWORD } from './seed.ts';

const { values } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '10' },
  },
});
const concurrency = Number(values.concurrency);
const seconds = Number(values.seconds);
const digest = md5Hex(BENCH_PASSWORD);
const stored = await hash(digest, BENCH_BCRYPT_COST);

let done = 0;
const started = performance.now();
const until = started + seconds * 1000;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (performance.now() < until) {
      if (!(await verify(digest, stored))) throw new Error('bcrypt verification failed');
      done++;
    }
  }),
);
const elapsed = (performance.now() - started) / 1000;
process.stdout.write(
  `${JSON.stringify({ verifications: done, seconds: elapsed, perSecond: done / elapsed })}\n`,
);
