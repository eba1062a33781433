// tokend serve: the HTTP server of src/server.ts, in the foreground until SIGTERM/SIGINT.
import type { LeafCommand } from '../command.ts';

export const serveCommand: LeafCommand = {
  name: 'serve',
  summary: 'Run the HTTP API (HOST:PORT from the environment) until SIGTERM or SIGINT',
  description:
    'Migrations run at start-up. The log is written to stdout as JSON lines: the database in use, the\n' +
    'address it listens on, and how to create the first user while there is none.',
  jsonDescription:
    'an error or warning at start-up as one JSON object on stderr (the log on stdout is JSON lines either way)',
  options: {
    workers: {
      type: 'string',
      value: 'N',
      description: 'processes to run through node:cluster (default: WORKERS, else 1); they share the port',
    },
  },
  async run(args, ctx) {
    const config = await ctx.config();
    config.workers = args.optionalInteger('workers', 1, 256) ?? config.workers;
    const { start } = await import('../../server.ts');
    await start(config);
  },
};
