// The security log page at /security-log: the signed-in user's own events (src/auth/security-log.ts),
// newest first, a page at a time, filtered by kind. It shows nothing of anyone else: every query is by
// the session's user, and an act of another account (an administrator's API token) or of the server's
// operator (the CLI) reads "an administrator", without its address, browser or token (`tokend audit`
// keeps them). A user agent shows as the browser and system it names, never as its text
// (src/web/user-agent.ts). Linked from the token page; works without JavaScript.
import type { FastifyInstance } from 'fastify';
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import {
  EVENT_KINDS,
  FAILED_SIGN_IN_WINDOW_S,
  isEventKind,
  listEvents,
  type EventKind,
  type LoggedEvent,
} from '../auth/security-log.ts';
import { tokenDescriptions } from '../auth/token-names.ts';
import { firstValue } from '../http/first-value.ts';
import { integerInRange } from '../decimal-integer.ts';
import { MAX_ID } from '../store/schema.ts';
import { html, type Html } from '../web/html.ts';
import { repeatableValue } from '../http/first-value.ts';
import { ACCOUNT_SESSION, sendAccountPage, when } from '../web/account-pages.ts';
import { requireSession, signedInUser } from '../web/hooks.ts';
import { userAgentWords } from '../web/user-agent.ts';

/** The security log page's query: one kind of event, and the page of events before an id. */
export const securityLogQuery = {
  type: 'object',
  properties: { kind: repeatableValue, before: repeatableValue },
} as const;

/** Events on one page. */
export const EVENTS_PER_PAGE = 50;

const MEANS_LABEL: Readonly<Record<string, string>> = {
  api: 'API',
  web: 'this website',
  oauth: 'an application',
  cli: 'an administrator',
  import: 'an import',
  expiry: 'expiry',
};

/**
 * Whether someone other than the user acted: the server's operator (the CLI), or another account's
 * credential (an administrator's API token running fix_privileges). Their address, browser and token are
 * theirs, not the user's to see.
 */
const byAdministrator = (e: LoggedEvent): boolean =>
  e.means === 'cli' || (e.actor_id !== null && e.actor_id !== e.user_id);

/** How the event came about, in a few words: the means and what acted. */
function meansText(e: LoggedEvent, names: ReadonlyMap<number, string>): string {
  if (byAdministrator(e)) return 'an administrator';
  const label = MEANS_LABEL[e.means] ?? e.means;
  if (e.means_id === null) return label;
  if (e.means === 'api') return `${label} (${tokenText(Number(e.means_id), names)})`;
  if (e.means === 'oauth') return `${label} (${e.means_id})`;
  return label;
}

/** An address with a break opportunity after each separator (`:` `.` `/`), so it never breaks mid-group. */
const breakableAddress = (address: string): Html =>
  html`${address.split(/(?<=[:./])/).map((part, i) => (i === 0 ? part : html`<wbr />${part}`))}`;

/** How a token revocation came about, in words (the detail the log keeps names it in a word). */
const REVOKED_HOW: Readonly<Record<string, string>> = {
  self: 'it revoked itself (the API)',
  'by-id': 'revoked by its id (the API)',
  page: 'revoked on the token page',
  regenerated: 'replaced by a regenerated one',
  expiry: 'it expired',
  operator: 'revoked by an administrator',
};

/** An event's detail in words where the log keeps a code word; else as kept. */
function detailText(e: LoggedEvent, detail: string): string {
  if (e.kind === 'token.revoked') return REVOKED_HOW[detail] ?? detail;
  if (e.kind === 'token.created') {
    if (detail === 'password') return 'with your password (the API)';
    const replaced = /^regenerated (\d+)$/.exec(detail);
    if (replaced) return `replacing token ${replaced[1]}`;
  }
  return detail;
}

/** A token as a person recognises it: its description while it exists, else its id. */
function tokenText(id: number, names: ReadonlyMap<number, string>): string {
  const description = names.get(id);
  return description === undefined || description === '' ? `token ${id}` : `token ${id} “${description}”`;
}

/** What the event was about: its token (by its description) or application, and its detail. */
function aboutText(e: LoggedEvent, names: ReadonlyMap<number, string>): string {
  const parts: string[] = [];
  if (e.token_id !== null)
    parts.push(e.kind === 'session.ended' ? `session ${e.token_id}` : tokenText(e.token_id, names));
  if (e.client_id !== null) parts.push(`application ${e.client_id}`);
  if (e.repeats !== null)
    parts.push(
      `${e.repeats} more ${e.repeats === 1 ? 'attempt' : 'attempts'} in the ${FAILED_SIGN_IN_WINDOW_S / 60} minutes after this one, from any address (not listed one by one)`,
    );
  else if (e.detail !== null) parts.push(detailText(e, e.detail));
  return parts.join(' · ');
}

const kindLabel = (kind: string): string => (isEventKind(kind) ? EVENT_KINDS[kind] : kind);

/** An event as the page shows it: its browser in words (userAgentWords). */
type ShownEvent = LoggedEvent & { browser: string | undefined };

interface SecurityLogView {
  events: ShownEvent[];
  kind: EventKind | undefined;
  /** the id to continue before, when there are older events */
  next: number | undefined;
  /** whether this is a later page (a link back to the newest) */
  paged: boolean;
  now: number;
  /** the descriptions of the user's live tokens the page names, by id */
  tokenNames: ReadonlyMap<number, string>;
}

const hrefFor = (kind: EventKind | undefined, before?: number): string => {
  const query = new URLSearchParams();
  if (kind !== undefined) query.set('kind', kind);
  if (before !== undefined) query.set('before', String(before));
  const text = query.toString();
  return text === '' ? '/security-log' : `/security-log?${text}`;
};

function filterForm(view: SecurityLogView): Html {
  const options = (Object.keys(EVENT_KINDS) as EventKind[]).map(
    (k) => html`<option value="${k}" ${view.kind === k ? html`selected` : ''}>${EVENT_KINDS[k]}</option>`,
  );
  return html`<form method="get" action="/security-log" class="filter">
    <label for="kind">Show</label>
    <select id="kind" name="kind">
      <option value="" ${view.kind === undefined ? html`selected` : ''}>Every event</option>
      ${options}
    </select>
    <button type="submit">Filter</button>
  </form>`;
}

function eventTable(view: SecurityLogView): Html {
  if (view.events.length === 0)
    return html`<p class="muted">${view.paged ? 'No older events.' : 'No events yet.'}</p>`;
  const rows = view.events.map(
    (e) =>
      html`<tr role="row">
        <td role="cell" class="description" data-label="Event">${kindLabel(e.kind)}</td>
        <td role="cell" data-label="When">${when(e.at, view.now)}</td>
        <td role="cell" data-label="By">${meansText(e, view.tokenNames)}</td>
        <td role="cell" class="about" data-label="Details">
          ${aboutText(e, view.tokenNames) || html`<span class="muted">—</span>`}
        </td>
        <td role="cell" class="address" data-label="Address">
          ${
            e.address === null || byAdministrator(e)
              ? html`<span class="muted">—</span>`
              : html`<code>${breakableAddress(e.address)}</code>`
          }
        </td>
        <td role="cell" class="agent" data-label="Browser (as reported)">
          ${e.browser === undefined || byAdministrator(e) ? html`<span class="muted">—</span>` : e.browser}
        </td>
      </tr>`,
  );
  return html`<table class="tokens events" role="table" aria-label="Your security log">
    <thead role="rowgroup">
      <tr role="row">
        <th role="columnheader" scope="col">Event</th>
        <th role="columnheader" scope="col">When</th>
        <th role="columnheader" scope="col">By</th>
        <th role="columnheader" scope="col">Details</th>
        <th role="columnheader" scope="col">Address</th>
        <th role="columnheader" scope="col">Browser (as reported)</th>
      </tr>
    </thead>
    <tbody role="rowgroup">
      ${rows}
    </tbody>
  </table>`;
}

export function securityLogPage(view: SecurityLogView): Html {
  return html`<header>
      <h1>Security log</h1>
      <a href="/tokens">Back to your tokens</a>
    </header>
    <p class="muted">
      What happened to your account, newest first: sign-ins, password confirmations, tokens made and revoked,
      applications you authorized or disconnected. Addresses are shown as the server saw them (an IPv6 address
      by its /64 block); the browser is the one the client says it is, which it may not be. What an
      administrator did to your account is shown as theirs, without their details. If you see something you
      did not do, sign out everywhere and change your password.
    </p>
    ${filterForm(view)} ${eventTable(view)}
    <nav class="actions" aria-label="Pages">
      ${view.paged ? html`<a href="${hrefFor(view.kind)}">Newest events</a>` : ''}
      ${view.next !== undefined ? html`<a href="${hrefFor(view.kind, view.next)}">Older events</a>` : ''}
    </nav>`;
}

/** The page's route, in the context of the pages; who may see it is the account pages' rule. */
export async function securityLogPages(untyped: FastifyInstance): Promise<void> {
  const app = untyped.withTypeProvider<JsonSchemaToTsProvider>();
  const { db } = app.web;
  app.get(
    '/security-log',
    { schema: { hide: true, querystring: securityLogQuery }, preHandler: requireSession(ACCOUNT_SESSION) },
    async (request, reply) => {
      const user = signedInUser(request);
      const rawKind = firstValue(request.query.kind) ?? '';
      const rawBefore = firstValue(request.query.before) ?? '';
      const before = rawBefore === '' ? undefined : integerInRange(rawBefore, 1, MAX_ID);
      if ((rawKind !== '' && !isEventKind(rawKind)) || (rawBefore !== '' && before === undefined)) {
        const problem =
          rawKind !== '' && !isEventKind(rawKind)
            ? `There is no kind of event called “${rawKind}”: choose one from the list.`
            : 'That page of the log does not exist: start again from the newest events.';
        return sendAccountPage(
          reply,
          400,
          'Security log',
          html`<h1>Security log</h1>
            <p class="error" role="alert">${problem}</p>
            <p><a href="/security-log">Show the newest events</a></p>`,
        );
      }
      const kind = rawKind === '' || !isEventKind(rawKind) ? undefined : rawKind;
      const rows = await listEvents(db, {
        userId: user.userId,
        ...(kind === undefined ? {} : { kind }),
        ...(before === undefined ? {} : { beforeId: before }),
        limit: EVENTS_PER_PAGE + 1,
      });
      const events = await Promise.all(
        rows
          .slice(0, EVENTS_PER_PAGE)
          .map(async (e) => ({ ...e, browser: await userAgentWords(e.user_agent) })),
      );
      const next = rows.length > EVENTS_PER_PAGE ? events[events.length - 1]?.id : undefined;
      // The tokens the page names, by their descriptions (one query for the page).
      const ids = events.flatMap((e) => [
        ...(e.token_id !== null && e.kind !== 'session.ended' ? [e.token_id] : []),
        ...(e.means === 'api' && e.means_id !== null && /^\d+$/.test(e.means_id) ? [Number(e.means_id)] : []),
      ]);
      const tokenNames = await tokenDescriptions(db, user.userId, ids);
      return sendAccountPage(
        reply,
        200,
        'Security log',
        securityLogPage({ events, kind, next, paged: before !== undefined, now: request.now, tokenNames }),
      );
    },
  );
}
