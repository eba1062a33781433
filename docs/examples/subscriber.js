// Prints every event tokend publishes, each once (docs/security-log.md); REDIS_URL and REDIS_KEY_PREFIX as tokend's.
import { Redis } from 'ioredis';

const channel = `${process.env.REDIS_KEY_PREFIX ?? 'tokend:'}events`;
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
let last = 0; // ids grow with each commit: one at or below `last` was seen already
redis.on('message', (_channel, message) => {
  const event = JSON.parse(message); // {"v":1,"id":1795660570311,"kind":"token.revoked","user_id":7,"token_ids":[42],…}
  if (event.v !== 1 || event.id <= last) return;
  last = event.id;
  console.log(JSON.stringify(event)); // e.g. close the sockets of event.token_ids
});
await redis.subscribe(channel);
console.error(`subscribed to ${channel}`);
