// The one clock: Unix seconds. Everything that decides by time (expiry, sessions, sudo mode) reads it here,
// or is handed a Clock (the credential core, the sweeps) so that tests can move time.
export type Clock = () => number;
export const nowSeconds: Clock = () => Math.floor(Date.now() / 1000);
