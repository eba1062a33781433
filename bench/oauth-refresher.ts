// Scenario 9's attacker, a process of its own so that its work does not share the event loop that
// measures the reads: each of an account's grants refreshed at POST /oauth/token in a loop of its own,
// the next request as soon as one is answered (Retry-After ignored), for a number of seconds.
//
//   REFRESHER='{"port":8080,"clientId":"…","refreshTokens":["…"],"seconds":3}' node bench/oauth-refresher.ts
//
// Prints one JSON line: requests sent, answers by status, and each grant's current refresh token.
import { Agent, request } from 'node:http';

interface Job {
  port: number;
  clientId: string;
  refreshTokens: string[];
  seconds: number;
}

const job = JSON.parse(process.env.REFRESHER ?? '') as Job;
const agent = new Agent({ keepAlive: true });

function refresh(refreshToken: string): Promise<{ status: number; body: string }> {
  const body = new URLSearchParams({
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: job.clientId,
  }).toString();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: job.port,
        path: '/oauth/token',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': body.length },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const until = performance.now() + job.seconds * 1000;
const tokens = [...job.refreshTokens];
const byStatus: Record<string, number> = {};
let sent = 0;
await Promise.all(
  tokens.map(async (_, grant) => {
    while (performance.now() < until) {
      sent++;
      let status = 'error';
      try {
        const answer = await refresh(tokens[grant]!);
        status = String(answer.status);
        if (answer.status === 200)
          tokens[grant] = (JSON.parse(answer.body) as { refresh_token: string }).refresh_token;
      } catch {
        // counted as an error
      }
      byStatus[status] = (byStatus[status] ?? 0) + 1;
    }
  }),
);
agent.destroy();
process.stdout.write(`${JSON.stringify({ sent, byStatus, refreshTokens: tokens })}\n`);
