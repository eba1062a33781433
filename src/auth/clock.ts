// The one clock: Unix seconds. It lives with the credential rules because they are what decides by time
// (a token's expiry, a session's lifetime, sudo mode); everything else that records a time (a token's
// creation, the sweeps) reads it here too, or is handed a Clock so that tests can move time.
export type Clock = () => number;
export const nowSeconds: Clock = () => Math.floor(Date.now() / 1000);
