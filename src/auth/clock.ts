// The one clock: Unix seconds. It lives with the credential rules because they are what decides by time
// (a token's expiry, a session's lifetime, sudo mode). The app reads it through Services.clock
// (BuildOptions.clock replaces it, so that tests can move time): the credential core, the sweeps, the
// OAuth server, the pages and token creation. A request that decides more than once by time reads it
// once and passes that time on (the consent form's sudo check and its page). Only what runs outside an
// app reads nowSeconds itself: the CLI's commands (the time they record) and the tests.
export type Clock = () => number;
export const nowSeconds: Clock = () => Math.floor(Date.now() / 1000);
