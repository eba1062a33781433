// tokend serve: the HTTP server of src/server.ts, in the foreground until SIGTERM/SIGINT.
import type { LeafCommand } from '../command.ts';

export const serveCommand: LeafCommand = {
  name: 'serve',
  summary: 'Run the HTTP API (HOST:PORT from the environment) until SIGTERM or SIGINT',
  description:
    'Migrations run at start-up. The log is written to stdout as JSON lines, so --json changes nothing here.',
  options: {},
  async run(_args, ctx) {
    const config = await ctx.config();
    const { serve } = await import('../../server.ts');
    await serve(config);
  },
};
