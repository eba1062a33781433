// The one clock: Unix seconds. Everything that decides by time (expiry, sessions, sudo mode) reads it here.
export const nowSeconds = (): number => Math.floor(Date.now() / 1000);
