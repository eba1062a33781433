// tokend serve: the HTTP server of src/server.ts, in the foreground until SIGTERM/SIGINT.
import type { LeafCommand } from '../command.ts';
import { holdForStartUp, releaseStartUpHold } from '../start-up-hold.ts';

export const serveCommand: LeafCommand = {
  name: 'serve',
  summary: 'Run the HTTP API (HOST:PORT from the environment) until SIGTERM or SIGINT',
  description:
    'Migrations run at start-up. The log is written to stdout as JSON lines, so --json changes nothing here.',
  options: {
    workers: {
      type: 'string',
      value: 'N',
      description: 'processes to run through node:cluster (default: WORKERS, else 1); they share the port',
    },
  },
  async run(args, ctx) {
    // Loading and building the app neither grows V8's young generation nor optimises start-up code; a
    // server that only idles keeps ~20 MB less resident, and one under load gets both as usual once it
    // listens (see start-up-hold.ts).
    holdForStartUp();
    try {
      const config = await ctx.config();
      config.workers = args.optionalInteger('workers', 1, 256) ?? config.workers;
      const { start } = await import('../../server.ts');
      await start(config);
    } finally {
      releaseStartUpHold();
    }
  },
};
