// The security log's pure rules: the cap on failed sign-ins per address and window, the shortened user
// agent, and `tokend audit --since`'s reading of a time.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  FAILED_SIGN_INS_PER_WINDOW,
  FAILED_SIGN_IN_WINDOW_S,
  FailedSignIns,
  USER_AGENT_MAX,
  shortUserAgent,
} from '../../src/auth/security-log.ts';
import { parseSince } from '../../src/cli/commands/audit.ts';

describe('FailedSignIns', () => {
  it('admits FAILED_SIGN_INS_PER_WINDOW failures of one address per window, the last one saying so', () => {
    const cap = new FailedSignIns();
    const start = FAILED_SIGN_IN_WINDOW_S * 1000;
    const details = Array.from({ length: FAILED_SIGN_INS_PER_WINDOW + 5 }, (_, i) =>
      cap.admit('192.0.2.1', start + i, 'password'),
    );
    assert.deepEqual(
      details.slice(0, FAILED_SIGN_INS_PER_WINDOW - 1),
      Array(FAILED_SIGN_INS_PER_WINDOW - 1).fill('password'),
    );
    assert.equal(details[FAILED_SIGN_INS_PER_WINDOW - 1], 'password; more from this address not recorded');
    assert.deepEqual(details.slice(FAILED_SIGN_INS_PER_WINDOW), Array(5).fill(undefined));
    // Another address has its own count; the next window starts afresh.
    assert.equal(cap.admit('192.0.2.2', start + 30, 'banned'), 'banned');
    assert.equal(cap.admit('192.0.2.1', start + FAILED_SIGN_IN_WINDOW_S, 'legacy'), 'legacy');
  });
});

describe('shortUserAgent', () => {
  it('keeps a printable, single-spaced agent of at most USER_AGENT_MAX characters', () => {
    assert.equal(shortUserAgent(undefined), null);
    assert.equal(shortUserAgent(' \t '), null);
    assert.equal(shortUserAgent('curl/8.5.0'), 'curl/8.5.0');
    assert.equal(shortUserAgent('a\u0000b\r\nc   d\u0085e'), 'a b c d e');
    const long = shortUserAgent('x'.repeat(500))!;
    assert.equal(long.length, USER_AGENT_MAX);
    assert.ok(long.endsWith('…'));
  });
});

describe('parseSince', () => {
  it('reads Unix seconds, an ISO date (UTC) or date-time, and refuses anything else', () => {
    assert.equal(parseSince('1795000000'), 1_795_000_000);
    assert.equal(parseSince('1970-01-02'), 86_400);
    assert.equal(parseSince('1970-01-02T00:00:10Z'), 86_410);
    assert.equal(parseSince('1970-01-02 00:01'), 86_460);
    assert.equal(parseSince('1970-01-02T02:00:00+02:00'), 86_400);
    for (const bad of ['', 'yesterday', '1970-13-01', '-5', '12abc', '2026-11-01T25:00'])
      assert.equal(parseSince(bad), undefined, bad);
  });
});
