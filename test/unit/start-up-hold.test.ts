// The start-up hold (src/cli/start-up-hold.ts): while held, V8 compiles nothing beyond bytecode; once
// released, hot code is optimised again, so a server under load runs optimised code as without the hold.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { holdForStartUp, releaseStartUpHold, startUpHeld } from '../../src/cli/start-up-hold.ts';

setFlagsFromString('--allow-natives-syntax');
// V8's own test hook, %GetOptimizationStatus: bit 4 says the function runs optimised code (Maglev or
// Turbofan), bit 6 that Turbofan compiled it.
const status = new Function('f', 'return %GetOptimizationStatus(f)') as (f: unknown) => number;
const optimised = (f: unknown): boolean => (status(f) & (1 << 4)) !== 0;
const turbofanned = (f: unknown): boolean => (status(f) & (1 << 6)) !== 0;

/** A fresh function each time (optimisation state is per closure's shared code), run hot. */
function runHot(): (xs: number[]) => number {
  const f = new Function(
    'xs',
    'let s = 0; for (let i = 0; i < 64; i++) s += xs[i % xs.length] * i; return s;',
  ) as (xs: number[]) => number;
  const xs = [1, 2, 3, 4, 5];
  // Turbofan compiles on a background thread: give it the time to finish, up to a bound.
  for (let round = 0; round < 20 && !turbofanned(f); round++) for (let i = 0; i < 100_000; i++) f(xs);
  return f;
}

describe('start-up hold', () => {
  it('keeps the optimising compilers off while held, and gives them back on release', () => {
    holdForStartUp();
    assert.equal(startUpHeld(), true);
    try {
      assert.equal(optimised(runHot()), false, 'optimised while held');
    } finally {
      releaseStartUpHold();
    }
    assert.equal(startUpHeld(), false);
    assert.equal(turbofanned(runHot()), true, 'not optimised by Turbofan after release');
  });

  it('is safe to hold twice and release twice', () => {
    holdForStartUp();
    holdForStartUp();
    releaseStartUpHold();
    releaseStartUpHold();
    assert.equal(startUpHeld(), false);
    assert.equal(turbofanned(runHot()), true);
  });
});
