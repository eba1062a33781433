// Small pure functions: username normalisation, the p/l pagination rule, URL redaction for logs, the
// access line's fields.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { usernameSafe } from '../../src/users/username.ts';
import { paginate } from '../../src/tokens/pagination.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { accessFields, redactUrl } from '../../src/http/logging.ts';

describe('usernameSafe()', () => {
  const cases: Array<[string, string]> = [
    ['Cool Player', 'cool_player'],
    ['cool_player', 'cool_player'],
    ['COOL_PLAYER', 'cool_player'],
    ['cool player', 'cool_player'],
    ['a  b', 'a__b'],
    ['a _b', 'a__b'],
    ['  Padded  ', 'padded'],
    ['ÄÖÜ Ünïcode', 'äöü_ünïcode'],
    ['x', 'x'],
    ['123', '123'],
    ['-[dash]-', '-[dash]-'],
    ['ａｌｉｃｅ', 'alice'],
    ['Straße', 'strasse'],
    ['ﬁsh', 'fish'],
    ['Ｃｏｏｌ　Ｐｌａｙｅｒ', 'cool_player'],
  ];
  for (const [input, expected] of cases) {
    it(`${JSON.stringify(input)} → ${JSON.stringify(expected)}`, () =>
      assert.equal(usernameSafe(input), expected));
  }

  it('treats spaces and underscores as the same and ignores case', () => {
    assert.equal(usernameSafe('My Name'), usernameSafe('my_name'));
    assert.equal(usernameSafe('MY NAME'), usernameSafe('My_Name'));
    assert.notEqual(usernameSafe('myname'), usernameSafe('my name'));
  });

  it('refuses control, format and zero-width characters in new names', async () => {
    const { usernameProblem } = await import('../../src/users/username-rules.ts');
    for (const bad of [
      'ali\u200bce',
      'a\u0000b',
      'a\tb',
      '\u202eevil',
      'x\u2028y',
      '',
      '   ',
      'a'.repeat(256),
      '\u3164',
      'alice\ufe0f',
      'alice\u034f',
      'alice\u17b4',
      'alice\u180b',
      'bob\u{e0100}',
      'x\u{e0041}',
      '\ufffd\ufffdlol',
      '\ua4eelice',
      '\u13aalice',
      '\u4e28ice',
      '\u3163ice', // a Hangul letter like "l"
      'ㄚes', // a Bopomofo letter like "Y"
    ])
      assert.ok(usernameProblem(bad) !== undefined, JSON.stringify(bad));
    for (const good of [
      'alice',
      'Cool Player',
      'ÄÖÜ',
      'ｆｕｌｌ',
      '日本語',
      'a-b_c.d',
      '山田たろう',
      'ヤマダ・タロウ',
      '김민준',
      '韓國김',
      '王ㄅㄆ',
      'Алиса 2',
      'नमस्ते',
      'עברית',
    ])
      assert.equal(usernameProblem(good), undefined, good);
  });

  it('knows the script of every character Unicode gives one', async () => {
    const { USERNAME_SCRIPTS } = await import('../../src/users/username-rules.ts');
    const known = new RegExp(
      `[\\p{Script=Common}\\p{Script=Inherited}\\p{Script=Unknown}${USERNAME_SCRIPTS.map((s) => `\\p{Script=${s}}`).join('')}]`,
      'u',
    );
    const missing: string[] = [];
    for (let codePoint = 0; codePoint <= 0x10ffff; codePoint++)
      if (!known.test(String.fromCodePoint(codePoint))) missing.push(codePoint.toString(16));
    assert.deepEqual(missing.slice(0, 10), [], 'code points whose script the username rule does not list');
  });

  it('is idempotent', () => {
    for (const [input] of cases) assert.equal(usernameSafe(usernameSafe(input)), usernameSafe(input));
  });
});

describe('paginate()', () => {
  const cases: Array<[p: unknown, l: unknown, limit: number, offset: number]> = [
    [undefined, undefined, 50, 0],
    ['1', undefined, 50, 0],
    ['2', undefined, 50, 50],
    ['3', '10', 10, 20],
    ['2', '3', 3, 3],
    ['0', '3', 3, 0],
    ['-1', '3', 3, 0],
    ['-99999', undefined, 50, 0],
    ['abc', 'xyz', 50, 0],
    ['', '', 50, 0],
    [' 2 ', ' 5 ', 5, 5],
    ['+2', '+5', 5, 5],
    [undefined, '0', 50, 0],
    [undefined, '-5', 50, 0],
    [undefined, '50', 50, 0],
    [undefined, '51', 50, 0],
    [undefined, '1000000', 50, 0],
    [undefined, '99999999999999999999', 50, 0],
    ['1.5', undefined, 50, 0],
    [undefined, '2.5', 50, 0],
    ['1e3', undefined, 50, 0],
    ['0x10', undefined, 50, 0],
    [['2', '9'], ['3'], 3, 3],
    [2, 3, 50, 0], // only query strings are read
    [null, null, 50, 0],
    [{}, [], 50, 0],
  ];
  for (const [p, l, limit, offset] of cases) {
    it(`p=${JSON.stringify(p)} l=${JSON.stringify(l)} → limit ${limit}, offset ${offset}`, () => {
      const result = paginate(p, l);
      assert.equal(result.limit, limit);
      assert.equal(result.offset, offset);
    });
  }

  it('huge pages stay safe integers', () => {
    for (const p of ['99999999', '99999999999999999999', String(2 ** 60)]) {
      const { limit, offset } = paginate(p, '50');
      assert.equal(limit, 50);
      assert.ok(Number.isSafeInteger(offset) && offset > 0, `${p}: ${offset}`);
    }
  });
});

describe('redactUrl()', () => {
  const cases: Array<[string, string]> = [
    ['/api/v1/tokens?token=abc123', '/api/v1/tokens?token=[REDACTED]'],
    ['/api/v1/tokens?k=abc123', '/api/v1/tokens?k=[REDACTED]'],
    ['/api/v1/ping?p=2&token=abc&l=3', '/api/v1/ping?p=2&token=[REDACTED]&l=3'],
    ['/api/v1/ping?k=a&token=b', '/api/v1/ping?k=[REDACTED]&token=[REDACTED]'],
    ['/api/v1/ping?TOKEN=abc', '/api/v1/ping?TOKEN=[REDACTED]'],
    ['/api/v1/ping?k=abc#frag', '/api/v1/ping?k=[REDACTED]#frag'],
    ['/api/v1/ping?token=', '/api/v1/ping?token=[REDACTED]'],
    ['/x?password=hunter2&user=me', '/x?password=[REDACTED]&user=me'],
    [
      '/x?code=c&code_verifier=v&client_secret=s',
      '/x?code=[REDACTED]&code_verifier=[REDACTED]&client_secret=[REDACTED]',
    ],
    ['/x?refresh_token=r', '/x?refresh_token=[REDACTED]'],
  ];
  for (const [url, expected] of cases) {
    it(`${url}`, () => assert.equal(redactUrl(url), expected));
  }

  it('leaves other parameters and paths alone', () => {
    for (const url of [
      '/api/v1/tokens?p=2&l=3',
      '/api/v1/tokens?tk=abc&kk=1',
      '/api/v1/token/new',
      '/api/v1/ping?callback=k',
    ]) {
      assert.equal(redactUrl(url), url);
    }
  });

  it('no secret survives, whatever its position', () => {
    const secret = '0123456789abcdef0123456789abcdef';
    for (const url of [`/a?token=${secret}`, `/a?x=1&k=${secret}&y=2`, `/a?k=${secret}&token=${secret}`]) {
      assert.ok(!redactUrl(url).includes(secret), url);
    }
  });
});

describe('the password-check queue', () => {
  it('refuses at once beyond maxWaiting, and drops an abandoned check before it runs', async () => {
    const { Semaphore, PasswordQueueFull, PasswordCheckAbandoned } =
      await import('../../src/users/passwords.ts');
    const gate = new Semaphore(1, 2);
    let release!: () => void;
    const ran: string[] = [];
    const first = gate.run(() => new Promise<void>((r) => (release = r)).then(() => void ran.push('first')));
    let gone = false;
    const second = gate.run(async () => void ran.push('second'), { abandoned: () => gone });
    const third = gate.run(async () => void ran.push('third'));
    assert.equal(gate.queued, 2);
    await assert.rejects(
      gate.run(async () => void ran.push('fourth')),
      PasswordQueueFull,
    );
    gone = true;
    release();
    await first;
    await assert.rejects(second, PasswordCheckAbandoned);
    await third;
    assert.deepEqual(ran, ['first', 'third']);
    assert.equal(gate.queued, 0);
    await gate.run(async () => void ran.push('later'));
    assert.deepEqual(ran, ['first', 'third', 'later']);
  });

  it('takes turns by key, lowest rank first; when full, a task that stands before the last one takes its place', async () => {
    const { Semaphore, PasswordQueueFull } = await import('../../src/users/passwords.ts');
    const gate = new Semaphore(1, 3);
    let release!: () => void;
    const ran: string[] = [];
    const task = (key: string, rank: number) => gate.run(async () => void ran.push(key), { key, rank });
    const first = gate.run(() => new Promise<void>((r) => (release = r)).then(() => void ran.push('first')));
    const a = task('a', 9);
    const b = task('b', 2);
    const c = task('c', 9);
    // Full. Rank 9 ties with the last in line (c, the later of the two 9s): refused.
    await assert.rejects(task('d', 9), PasswordQueueFull);
    // Rank 1 stands before c and takes its place; c is refused.
    const e = task('e', 1);
    await assert.rejects(c, PasswordQueueFull);
    // A key's latest rank ranks all its waiting tasks: b, now at 12, is last, and its new task refused.
    await assert.rejects(task('b', 12), PasswordQueueFull);
    assert.equal(gate.queued, 3);
    release();
    await Promise.all([first, a, b, e]);
    assert.deepEqual(ran, ['first', 'e', 'a', 'b']);
    assert.equal(gate.queued, 0);
  });
});

describe('accessFields()', () => {
  const request = (url: string, ip: string) =>
    ({
      id: 'r-1',
      method: 'POST',
      url,
      ip,
      socket: { remoteAddress: '10.0.0.9' },
    }) as unknown as FastifyRequest;
  const reply = { statusCode: 201, elapsedTime: 1.23456789 } as unknown as FastifyReply;

  it('holds the id, method, redacted URL, status, time to the microsecond and canonical client', () => {
    assert.deepEqual(accessFields(request('/api/v1/tokens?k=secret&x=1', '::ffff:203.0.113.7'), reply), {
      reqId: 'r-1',
      method: 'POST',
      url: '/api/v1/tokens?k=[REDACTED]&x=1',
      statusCode: 201,
      responseTime: 1.235,
      remoteAddress: '203.0.113.7',
    });
  });

  it('names an IPv6 client by its /64, and the socket when the address is none', () => {
    assert.equal(
      accessFields(request('/', '2001:db8:1:2:3:4:5:6'), reply).remoteAddress,
      '2001:db8:1:2::/64',
    );
    assert.equal(accessFields(request('/', 'not an address'), reply).remoteAddress, '10.0.0.9');
  });
});
