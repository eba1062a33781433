// The registry of tokend commands: one export line per command module (listed by name in --help).
export { clientCommand } from './client.ts';
export { exportCommand, importCommand } from './transfer.ts';
export { migrateCommand } from './migrate.ts';
export { serveCommand } from './serve.ts';
export { tokenCommand } from './token.ts';
export { userCommand } from './user.ts';
export { importRippleCommand } from './import-ripple.ts';
