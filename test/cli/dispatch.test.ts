// The tokend command line itself: help, unknown commands and options, missing and bad values, config errors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMMAND_NAMES, allCommands, commandsFor } from '../../src/cli/commands/index.ts';
import { isGroup, type Command, type LeafCommand } from '../../src/cli/command.ts';
import { parseTokenPrivileges, parseUserPrivileges } from '../../src/cli/privilege-option.ts';
import { isBanned, limit, tokenPrivilegeNames } from '../../src/auth/privileges.ts';
import { cliHarness, jsonError, runCli, onlyJson } from '../helpers/cli.ts';

const PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};
/** The README and the guides that show tokend commands, as one text. */
const DOCS = ['README.md', 'docs/cli.md', 'docs/api.md', 'docs/oauth.md', 'docs/operations.md']
  .map((file) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8'))
  .join('\n');

/** Every runnable command path with its declaration, from the registry main.ts dispatches through. */
function leaves(commands: Command[], prefix: string[] = []): Array<[string[], LeafCommand]> {
  return commands.flatMap((c): Array<[string[], LeafCommand]> =>
    isGroup(c) ? leaves(c.subcommands, [...prefix, c.name]) : [[[...prefix, c.name], c]],
  );
}
const COMMANDS = await allCommands();
const LEAVES = leaves(COMMANDS);
const GROUPS = COMMANDS.filter(isGroup);

/** A database path that no test writes to: commands that fail on arguments must not even open it. */
function scratchDb(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'tokend-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return `sqlite:${join(dir, 'tokend.db')}`;
}

describe('the command registry', () => {
  it('a command line that names a command loads that command alone; anything else loads every command', async () => {
    for (const name of COMMAND_NAMES) {
      const loaded = await commandsFor([name, '--help']);
      assert.deepEqual(
        loaded.map((c) => c.name),
        [name],
        `the registry's word ${name} loads the command of that name`,
      );
    }
    const every = COMMANDS.map((c) => c.name);
    assert.deepEqual([...every].sort(), [...COMMAND_NAMES].sort());
    for (const argv of [[], ['help', 'user'], ['--version'], ['sreve']])
      assert.deepEqual(
        (await commandsFor(argv)).map((c) => c.name),
        every,
        JSON.stringify(argv),
      );
  });
});

describe('tokend: help', { concurrency: 4 }, () => {
  it('tokend --help lists every documented command', async () => {
    const r = await runCli(['--help']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Usage: tokend <command>/);
    for (const path of [
      'serve',
      'migrate',
      'user create',
      'user set-privileges',
      'user ban',
      'user unban',
      'user passwd',
      'user list',
      'token create',
      'token list',
      'token revoke',
      'client create',
      'client list',
      'client delete',
      'client token',
    ])
      assert.match(r.stdout, new RegExp(`^  ${path} `, 'm'), `missing ${path}`);
  });

  for (const [path, command] of LEAVES) {
    it(`tokend ${path.join(' ')} --help shows its usage and every option`, async () => {
      const r = await runCli([...path, '--help']);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(r.stdout.startsWith(`Usage: tokend ${path.join(' ')}`), r.stdout);
      for (const name of [...Object.keys(command.options), 'json', 'help'])
        assert.match(r.stdout, new RegExp(`--${name}\\b`), `--${name} missing from the help`);
      assert.equal(r.stderr, '');
    });
  }

  for (const group of GROUPS) {
    it(`tokend ${group.name} --help lists its subcommands`, async () => {
      const r = await runCli([group.name, '--help']);
      assert.equal(r.code, 0, r.stderr);
      for (const sub of group.subcommands)
        assert.match(r.stdout, new RegExp(`^  ${sub.name} `, 'm'), `${sub.name} missing`);
    });
  }

  it('-h, "help user create" and --help among other options print the same help', async () => {
    const [long, short, word, mixed] = await Promise.all([
      runCli(['user', 'create', '--help']),
      runCli(['user', 'create', '-h']),
      runCli(['help', 'user', 'create']),
      runCli(['user', 'create', '--bogus', '--help']),
    ]);
    for (const r of [short, word, mixed]) {
      assert.equal(r.code, 0);
      assert.equal(r.stdout, long.stdout);
    }
  });

  it('tokend --version and -V print the version in package.json', async () => {
    const [long, short, json] = await Promise.all([
      runCli(['--version']),
      runCli(['-V']),
      runCli(['--json', '--version']),
    ]);
    for (const r of [long, short]) {
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `tokend ${PACKAGE.version}\n`);
    }
    assert.deepEqual(onlyJson(json), { version: PACKAGE.version });
    assert.match((await runCli(['--help'])).stdout, /--version/);
  });

  it('no command at all: the usage on stderr and exit code 2; with --json, a JSON error', async () => {
    const r = await runCli([]);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^Usage: tokend <command>/);
    const json = await runCli(['--json']);
    assert.equal(json.code, 2);
    assert.deepEqual(jsonError(json), { error: 'no command given', code: 'usage', help: 'tokend --help' });
  });
});

describe('tokend: help text', { concurrency: 4 }, () => {
  for (const [path, command] of LEAVES) {
    it(`tokend ${path.join(' ')} --help says each thing once`, async () => {
      const r = await runCli([...path, '--help']);
      assert.equal(r.code, 0, r.stderr);
      const lines = r.stdout
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '');
      assert.deepEqual(
        lines.filter((l, i) => lines.indexOf(l) !== i),
        [],
        'no line twice',
      );
      // The Options table explains each option: the paragraphs above it do not explain them again.
      for (const key of Object.keys(command.options))
        assert.doesNotMatch(command.description ?? '', new RegExp(`--${key}\\b`), `--${key} explained twice`);
      for (const line of lines.filter((l) => l.startsWith('--')))
        assert.ok((line.match(/repeat/g) ?? []).length <= 1, `said twice: ${line}`);
    });
  }

  it('the command list says once that every command takes --json and --help', async () => {
    const r = await runCli(['--help']);
    assert.equal(r.stdout.match(/Every command takes --json/g)?.length, 1);
  });

  /** Every `--privileges X` of a token or user command shown in --help, in the README or in a guide. */
  function privilegeExamples(): Array<{ kind: 'token' | 'user'; line: string; value: string }> {
    const examples = LEAVES.flatMap(([, c]) => c.examples ?? []);
    const shown = DOCS.split('\n').filter((l) => /tokend .*(token|user) /.test(l));
    const out: Array<{ kind: 'token' | 'user'; line: string; value: string }> = [];
    for (const line of [...examples, ...shown]) {
      const kind = /\btoken create\b/.test(line)
        ? 'token'
        : /\buser (create|set-privileges)\b/.test(line)
          ? 'user'
          : undefined;
      const value = /--privileges[ =]([\w,+]+)/.exec(line)?.[1];
      // A placeholder (N) of a usage line is no example.
      if (kind && value && !/^[A-Z]$/.test(value)) out.push({ kind, line, value });
    }
    return out;
  }

  it('examples never ask for token privileges that no owner is granted, nor ban the user they create', () => {
    const found = privilegeExamples();
    assert.ok(
      found.some((e) => e.kind === 'token') && found.some((e) => e.kind === 'user'),
      'examples found',
    );
    for (const { kind, line, value } of found) {
      if (kind === 'token') {
        const requested = parseTokenPrivileges(value, 'token create');
        const neverGranted = tokenPrivilegeNames(requested & ~limit(requested, 0xffffffff));
        assert.deepEqual(neverGranted, [], `${line}: no user is ever granted ${neverGranted.join(', ')}`);
      } else {
        const privileges = parseUserPrivileges(value, 'user create');
        assert.ok(!isBanned(privileges), `${line}: privileges ${privileges} ban the user`);
      }
    }
  });

  it('token create --help names the token privileges never granted', async () => {
    const r = await runCli(['token', 'create', '--help']);
    assert.match(r.stdout, /\bRead is never granted/);
  });
});

describe('tokend: renamed options', { concurrency: 4 }, () => {
  it('--client names a client and --user-id a new user; their older name --id still works, unlisted', async (t) => {
    const h = await cliHarness(t);
    assert.equal(
      (await h.json(['user', 'create', '--username', 'a', '--password', 'p', '--user-id', '7'])).id,
      7,
    );
    assert.equal((await h.json(['user', 'create', '--username', 'b', '--password', 'p', '--id', '9'])).id, 9);
    // Both names, in either order.
    for (const both of [
      ['--id', '3', '--user-id', '4'],
      ['--user-id', '4', '--id', '3'],
    ]) {
      const r = await h.cli(['user', 'create', '--username', 'c', '--password', 'p', ...both]);
      assert.equal(r.code, 2, both.join(' '));
      assert.match(r.stderr, /give --user-id once \(--id is its older name\)/);
    }

    const uri = ['--redirect-uri', 'https://app.example/cb'];
    const one = await h.json(['client', 'create', '--name', 'One', ...uri]);
    const two = await h.json(['client', 'create', '--name', 'Two', ...uri]);
    assert.deepEqual(await h.json(['client', 'delete', '--client', one.id as string]), {
      id: one.id,
      deleted: true,
    });
    assert.deepEqual(await h.json(['client', 'delete', '--id', two.id as string]), {
      id: two.id,
      deleted: true,
    });

    for (const path of [
      ['user', 'create'],
      ['client', 'delete'],
    ]) {
      const help = await runCli([...path, '--help']);
      assert.doesNotMatch(help.stdout, /--id\b/, `${path.join(' ')} --help shows no --id`);
    }
  });

  it('a client id is --client and a token id --id in every command', () => {
    for (const [path, command] of LEAVES) {
      for (const [key, spec] of Object.entries(command.options)) {
        if (/\bclient id\b/.test(spec.description)) assert.equal(key, 'client', `${path.join(' ')} --${key}`);
        if (key === 'id') assert.match(spec.description, /\btoken id\b/, `${path.join(' ')} --id`);
      }
    }
  });
});

describe('tokend: usage errors', { concurrency: 4 }, () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['an unknown command', ['frobnicate'], /unknown command: "frobnicate"/],
    ['an unknown subcommand', ['user', 'delete', '--user', '1'], /unknown subcommand of "user": "delete"/],
    ['a group without its subcommand', ['token'], /"tokend token" needs a subcommand/],
    ['an unknown option', ['user', 'list', '--verbose'], /unknown option --verbose/],
    ['an unknown option before the subcommand', ['user', '--verbose', 'list'], /unknown option --verbose/],
    ['a stray positional argument', ['user', 'list', 'alice'], /unexpected argument "alice"/],
    ['a missing required option', ['user', 'create', '--password-stdin'], /missing option --username/],
    [
      'no password, and standard input is not a terminal',
      ['user', 'create', '--username', 'a'],
      /no password: pass --password-stdin.*visible|no password: pass --password-stdin/,
    ],
    [
      'both ways of giving a password',
      ['user', 'passwd', '--user', 'a', '--password', 'x', '--password-stdin'],
      /either --password or --password-stdin/,
    ],
    ['an option without its value', ['token', 'revoke', '--id'], /option --id needs a value/],
    [
      'a non-numeric id',
      ['token', 'revoke', '--id', 'abc'],
      /--id: expected an integer from 1 to \d+, got "abc"/,
    ],
    ['a negative id', ['token', 'revoke', '--id=-3'], /--id: expected an integer/],
    ['a zero id', ['token', 'revoke', '--id', '0'], /--id: expected an integer/],
    [
      'a fractional user id',
      ['user', 'create', '--username', 'x', '--password', 'p', '--user-id', '1.5'],
      /--user-id: expected an integer/,
    ],
    [
      'a user privilege number with a bit no user privilege has',
      ['user', 'create', '--username', 'x', '--password', 'p', '--privileges', '8388611'],
      /--privileges: 8388611 has the bit 8388608, which is no user privilege; user privileges are the bits 1 \(UserPublic\) to 4194304 \(AdminCaker\), 8388607 for all of them/,
    ],
    [
      'user privileges with bits beyond 2^32',
      ['user', 'set-privileges', '--user', '1', '--privileges', String(2 ** 40 + 3)],
      /--privileges: 1099511627779 has the bit 1099511627776, which is no user privilege/,
    ],
    [
      'an unknown privilege name',
      ['user', 'create', '--username', 'x', '--password', 'p', '--privileges', 'UserPublic,Wizard'],
      /--privileges: expected an integer or user privilege names/,
    ],
    [
      'privileges beyond 2^53',
      ['token', 'create', '--user', '1', '--privileges', '18014398509481984'],
      /--privileges: 18014398509481984 is larger than/,
    ],
    [
      'a password version other than 1 or 2',
      ['user', 'create', '--username', 'x', '--password', 'p', '--password-version', '3'],
      /--password-version: expected an integer from 1 to 2/,
    ],
    ['an empty password', ['user', 'passwd', '--user', '1', '--password', ''], /must not be empty/],
    [
      'an option where a value should be',
      ['user', 'create', '--username', 'x', '--password', '--password-stdin'],
      /option --password needs a value \(one starting with "-" is written --password=-VALUE\)/,
    ],
    ['an unknown command after "help"', ['help', 'user', 'nope'], /no command "user nope"/],
  ];
  for (const [what, args, message] of cases) {
    it(`${what}: a message on stderr (with --json, a JSON error), nothing on stdout, exit code 2`, async (t) => {
      const env = { DATABASE_URL: scratchDb(t) };
      const text = await runCli(args, { env });
      assert.equal(text.code, 2, text.stdout);
      assert.equal(text.stdout, '');
      assert.match(text.stderr, /^tokend: /);
      assert.match(text.stderr, message);
      const json = await runCli([...args, '--json'], { env });
      assert.equal(json.code, 2, json.stdout);
      const { error, code, help } = jsonError(json);
      assert.equal(code, 'usage');
      assert.match(error, message);
      assert.match(String(help), /^tokend( [a-z-]+)* --help$/);
    });
  }

  it('a usage error points at the command whose --help explains it', async () => {
    const r = await runCli(['token', 'create', '--user', '1', '--privileges', 'nope']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /Run "tokend token create --help" for usage\./);
    const json = await runCli(['token', 'create', '--user', '1', '--privileges', 'nope', '--json']);
    assert.equal(jsonError(json).help, 'tokend token create --help');
  });

  it('run through npm in a checkout, the hint is the command that runs there', async () => {
    const npm = { env: { npm_lifecycle_event: 'tokend' } };
    const r = await runCli(['token', 'create', '--user', '1', '--privileges', 'nope'], npm);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /Run "npm run tokend -- token create --help" for usage\./);
    const json = await runCli(['token', 'create', '--user', '1', '--privileges', 'nope', '--json'], npm);
    assert.equal(jsonError(json).help, 'npm run tokend -- token create --help');
  });

  it('a failure is exit code 1, told apart from a usage mistake', async (t) => {
    const env = { DATABASE_URL: scratchDb(t) };
    const r = await runCli(['token', 'revoke', '--id', '5'], { env });
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      'tokend: no token with id 5\n',
      'no pointer to --help: the command line was right',
    );
    assert.deepEqual(jsonError(await runCli(['token', 'revoke', '--id', '5', '--json'], { env })), {
      error: 'no token with id 5',
      code: 'failed',
    });
  });
});

describe('tokend: the nearest name for a mistyped one', { concurrency: 4 }, () => {
  const cases: Array<[string, string[], string]> = [
    ['a command, letters swapped', ['sreve'], 'unknown command: "sreve" (did you mean "serve"?)'],
    ['a command, a letter missing', ['tokn', 'list'], 'unknown command: "tokn" (did you mean "token"?)'],
    ['a subcommand', ['user', 'lst'], 'unknown subcommand of "user": "lst" (did you mean "list"?)'],
    [
      'an option of the command',
      ['token', 'create', '--usr', 'alice'],
      'unknown option --usr (did you mean --user?)',
    ],
    [
      'an option written with its value',
      ['token', 'create', '--user', 'alice', '--privilges=3'],
      'unknown option --privilges (did you mean --privileges?)',
    ],
    [
      '--json misspelt before the command',
      ['--jsno', 'user', 'list'],
      'unknown option --jsno (did you mean --json?)',
    ],
    [
      'a command after "help"',
      ['help', 'user', 'craete'],
      'no command "user craete" (did you mean "user create"?)',
    ],
  ];
  for (const [what, args, message] of cases) {
    it(`${what}: ${message}`, async (t) => {
      const r = await runCli(args, { env: { DATABASE_URL: scratchDb(t) } });
      assert.equal(r.code, 2);
      assert.equal(r.stderr.split('\n')[0], `tokend: ${message}`);
    });
  }

  it('no name is offered when none is near', async (t) => {
    const env = { DATABASE_URL: scratchDb(t) };
    for (const args of [['frobnicate'], ['user', 'list', '--verbose'], ['token', 'create', '--zzzzzz']]) {
      const r = await runCli(args, { env });
      assert.equal(r.code, 2);
      assert.doesNotMatch(r.stderr, /did you mean/, args.join(' '));
    }
  });
});

describe('tokend: configuration errors', { concurrency: 4 }, () => {
  for (const [variable, value] of [
    ['PORT', 'abc'],
    ['PORT', '-1'],
    ['DATABASE_URL', 'oracle://db'],
    ['BCRYPT_COST', '99'],
  ] as const) {
    it(`${variable}=${value}: one line naming the variable, exit code 1; with --json, a JSON error`, async (t) => {
      const env: Record<string, string> = { DATABASE_URL: scratchDb(t), [variable]: value };
      const r = await runCli(['user', 'list'], { env });
      assert.equal(r.code, 1);
      assert.equal(r.stdout, '');
      const lines = r.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0] ?? '', new RegExp(`^tokend: invalid configuration: ${variable}: `));
      const json = await runCli(['user', 'list', '--json'], { env });
      assert.equal(json.code, 1);
      const error = jsonError(json);
      assert.equal(error.code, 'config');
      assert.equal(error.variable, variable);
      assert.match(error.error, new RegExp(`^invalid configuration: ${variable}: `));
    });
  }

  it('a misspelt variable: one warning line each, naming the variable meant; the command runs', async (t) => {
    const env = { DATABASE_URL: scratchDb(t), DATABSE_URL: 'sqlite:elsewhere.db', LOG_LEVL: 'debug' };
    const r = await runCli(['user', 'list'], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'No users yet.\n');
    assert.deepEqual(r.stderr.trimEnd().split('\n'), [
      "tokend: warning: the environment variable DATABSE_URL is not one of tokend's and is ignored; did you mean DATABASE_URL?",
      "tokend: warning: the environment variable LOG_LEVL is not one of tokend's and is ignored; did you mean LOG_LEVEL?",
    ]);
    const json = await runCli(['user', 'list', '--json'], { env });
    assert.deepEqual(onlyJson(json), { users: [] });
    const warnings = json.stderr
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { warning: string; variable: string });
    assert.deepEqual(
      warnings.map((w) => w.variable),
      ['DATABSE_URL', 'LOG_LEVL'],
    );
    assert.match(warnings[0]?.warning ?? '', /did you mean DATABASE_URL\?$/);
  });

  it('--help needs no valid configuration', async () => {
    const r = await runCli(['user', 'list', '--help'], { env: { PORT: 'abc' } });
    assert.equal(r.code, 0, r.stderr);
  });

  it('--json may come before the command', async (t) => {
    const r = await runCli(['--json', 'user', 'list'], { env: { DATABASE_URL: scratchDb(t) } });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(onlyJson(r), { users: [] });
  });
});
