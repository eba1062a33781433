// The /device page (RFC 8628 §3.3): a signed-in user types the code a device shows, sees which application
// asks and what it will be able to do (the consent page's words), and approves (in sudo mode) or denies.
// - GET /device[?user_code=…]: the form (the code filled in from verification_uri_complete, never looked
//   up on a GET), with the warning of RFC 8628 §5.4: enter only a code you started yourself.
// - POST /device: looks the code up, counted by DeviceLimits (only wrong codes spend the tries), and
//   shows the application with Allow and Deny.
// - POST /device/decide: Allow (the password again after SUDO_WINDOW_S) or Deny.
// Every form is CSRF-protected; every step is in the security log (device.code_refused,
// device.approved, device.denied; the device's exchange is device.signed_in). No script: the pages work
// without JavaScript, and at 390 px (the small pages' layout).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { clientAddress } from '../../http/client-address.ts';
import { inSudoMode } from '../../auth/sessions.ts';
import { recordEvent } from '../../auth/security-log.ts';
import { findUserById } from '../../users/repository.ts';
import { html } from '../../web/html.ts';
import { errorPage, hiddenFields, logoutForm, sendPage } from '../../web/pages.ts';
import { csrfToken, webAct, type Session } from '../../web/session.ts';
import { avatar } from '../../web/avatar.ts';
import { requireSession, signedInUser, sudoOrRefuse } from '../../web/hooks.ts';
import { APPLICATION_SUSPENDED, findClient } from '../clients.ts';
import type { ConsentPageDeps } from '../deps.ts';
import type { DeviceLimits } from '../device-limits.ts';
import {
  decideDeviceCode,
  endApprovalsBeyond,
  findPendingByUserCode,
  normalUserCode,
  shownUserCode,
  type DeviceCodeRow,
} from '../device.ts';
import { addToApproval, ownerIsBanned } from '../repository.ts';
import { SCOPES } from '../scopes.ts';
import { singleParam } from '../params.ts';
import { decisionForm, sendConsentPage, whatItMayDo, type ScopeView } from './consent-page.ts';
import { doc } from '../route-doc.ts';

const DEVICE_PATH = '/device';

/** RFC 8628 §5.4: the user must know that a code comes from a device of their own, never from someone. */
const PHISHING_NOTE = html`<p class="notice" role="note">
  Only enter a code that a device or program <strong>you</strong> are using shows you right now. If someone
  sent you a code or asked you to enter one here, do not: it would give them access to your account.
</p>`;

function enterCodePage(view: { csrf: string; username: string; userCode: string; error?: string }) {
  return html`<h1>Sign in on a device</h1>
    <p>Enter the code your device or program shows, to sign it in as <strong>${view.username}</strong>.</p>
    ${PHISHING_NOTE}
    ${view.error ? html`<p class="error" role="alert" id="code-error">${view.error}</p>` : ''}
    <form method="post" action="${DEVICE_PATH}">
      ${hiddenFields({ _csrf: view.csrf })}
      <label for="user_code">Code</label>
      <input
        type="text"
        id="user_code"
        name="user_code"
        value="${view.userCode}"
        required
        autofocus
        autocomplete="off"
        autocapitalize="characters"
        spellcheck="false"
        maxlength="32"
        placeholder="BCDF-GHJK"
        ${view.error ? html`aria-invalid="true" aria-describedby="code-error"` : ''}
      />
      <div class="actions"><button type="submit" class="primary">Continue</button></div>
    </form>
    <div class="muted signout">Not ${view.username}? ${logoutForm(view.csrf, 'Sign out', 'link')}</div>`;
}

interface ConfirmView {
  csrf: string;
  username: string;
  /** SERVER_NAME: whose accounts these are */
  serverName: string;
  userCode: string;
  client: { name: string; avatar: string; ownerName: string };
  scopes: readonly ScopeView[];
  needsPassword: boolean;
  error?: string;
}

function confirmPage(view: ConfirmView) {
  const { client } = view;
  return html`<div class="client">
      ${avatar(client.name, client.avatar, 64)}
      <div>
        <h1>Sign in to ${client.name} on your device?</h1>
        <p class="muted">An app by <strong>${client.ownerName}</strong></p>
      </div>
    </div>
    <p>
      Code <strong>${view.userCode}</strong>: check that your device shows this same code. If you did not
      start this sign-in yourself, deny it.
    </p>
    ${whatItMayDo(client.name, view)}
    ${view.error ? html`<p class="error" role="alert">${view.error}</p>` : ''}
    ${decisionForm(`${DEVICE_PATH}/decide`, { _csrf: view.csrf, user_code: view.userCode }, view)}`;
}

function decidedPage(approved: boolean, name: string) {
  return approved
    ? html`<h1>Device signed in</h1>
        <p>You allowed <strong>${name}</strong>. Go back to your device: it signs in within a few seconds.</p>
        <p><a href="/tokens">Go to your token page</a></p>`
    : html`<h1>Sign-in denied</h1>
        <p><strong>${name}</strong> gets no access. You can close this page.</p>
        <p><a href="/tokens">Go to your token page</a></p>`;
}

const bannedPage = (reply: FastifyReply) =>
  sendPage(reply, 403, 'Error', errorPage('This account is banned.'));

export async function devicePages(
  pages: FastifyInstance,
  deps: ConsentPageDeps & { deviceLimits: DeviceLimits },
): Promise<void> {
  const { web } = deps;
  const signedIn = requireSession({ home: DEVICE_PATH, banned: bannedPage });

  const askForCode = (
    request: FastifyRequest,
    reply: FastifyReply,
    session: Session,
    status: number,
    userCode: string,
    error?: string,
  ) =>
    sendPage(
      reply,
      status,
      'Sign in on a device',
      enterCodePage({
        csrf: csrfToken(request, reply),
        username: session.username,
        userCode,
        ...(error === undefined ? {} : { error }),
      }),
    );

  /**
   * The pending code a form names, counted against the tries (a code found gives its try back), or the
   * answer already sent (the form again, with why).
   */
  async function pendingCode(
    request: FastifyRequest,
    reply: FastifyReply,
    session: Session,
    now: number,
  ): Promise<{ row: DeviceCodeRow; normal: string } | FastifyReply> {
    const typed = singleParam(request.body, 'user_code') ?? '';
    const normal = normalUserCode(typed);
    if (normal === undefined)
      return askForCode(
        request,
        reply,
        session,
        400,
        typed.slice(0, 32),
        'That is not a code: a code is 8 letters, like BCDF-GHJK.',
      );
    const counted = await deps.deviceLimits.tryCode(session.userId, clientAddress(request));
    if (!counted.allowed) {
      reply.header('Retry-After', String(counted.retryAfterS));
      return askForCode(
        request,
        reply,
        session,
        429,
        shownUserCode(normal),
        `Too many codes tried. Try again in ${counted.retryAfterS} seconds.`,
      );
    }
    const row = await findPendingByUserCode(deps.db, normal, now);
    if (!row) {
      await recordEvent(deps.db, webAct(web, request, session, now), {
        userId: session.userId,
        kind: 'device.code_refused',
      });
      return askForCode(
        request,
        reply,
        session,
        400,
        shownUserCode(normal),
        'That code is not valid, or it has expired or been used. Check the code your device shows now.',
      );
    }
    await counted.found();
    return { row, normal };
  }

  async function showConfirm(
    request: FastifyRequest,
    reply: FastifyReply,
    session: Session,
    found: { row: DeviceCodeRow; normal: string },
    now: number,
    status = 200,
    error?: string,
  ) {
    const client = await findClient(deps.db, found.row.client_id);
    if (!client || (await ownerIsBanned(deps.db, client.ownerId)))
      return sendPage(
        reply,
        403,
        'Error',
        errorPage(client ? APPLICATION_SUSPENDED : 'This code is no longer valid.'),
      );
    const owner = await findUserById(deps.db, client.ownerId);
    const scopes = found.row.scope
      .split(' ')
      .filter(Boolean)
      .map((name) => ({ name, description: SCOPES[name]?.description }));
    return sendConsentPage(
      reply,
      status,
      `Sign in to ${client.name}`,
      confirmPage({
        csrf: csrfToken(request, reply),
        username: session.username,
        serverName: reply.serverName,
        userCode: shownUserCode(found.normal),
        client: { name: client.name, avatar: client.avatar, ownerName: owner?.username ?? 'an unknown user' },
        scopes,
        needsPassword: !inSudoMode(session, now, web.sudoWindowS),
        ...(error === undefined ? {} : { error }),
      }),
    );
  }

  pages.get(
    DEVICE_PATH,
    { ...doc('Sign in on a device: enter its code (RFC 8628 §3.3)'), preHandler: signedIn },
    async (request, reply) => {
      const session = signedInUser(request);
      const given = normalUserCode(singleParam(request.query, 'user_code') ?? '');
      return askForCode(request, reply, session, 200, given === undefined ? '' : shownUserCode(given));
    },
  );

  pages.post(
    DEVICE_PATH,
    {
      ...doc('The code a device shows: which application asks'),
      preHandler: [pages.csrfProtection, signedIn],
    },
    async (request, reply) => {
      const session = signedInUser(request);
      const now = request.now;
      const found = await pendingCode(request, reply, session, now);
      if (!('row' in found)) return found;
      return showConfirm(request, reply, session, found, now);
    },
  );

  pages.post(
    `${DEVICE_PATH}/decide`,
    { ...doc('Allow or deny a device'), preHandler: [pages.csrfProtection, signedIn] },
    async (request, reply) => {
      const session = signedInUser(request);
      const now = request.now;
      const decision = singleParam(request.body, 'decision');
      if (decision !== 'allow' && decision !== 'deny')
        return sendPage(reply, 400, 'Error', errorPage('Choose Allow or Deny.'));
      const found = await pendingCode(request, reply, session, now);
      if (!('row' in found)) return found;
      const act = webAct(web, request, session, now);
      const client = await findClient(deps.db, found.row.client_id);
      const name = client?.name ?? 'The application';
      const hash = found.row.device_code_hash;
      if (decision === 'deny') {
        if (
          await decideDeviceCode(
            deps.db,
            hash,
            { status: 'denied', userId: session.userId, authTime: null },
            now,
          )
        )
          await recordEvent(deps.db, act, {
            userId: session.userId,
            kind: 'device.denied',
            clientId: found.row.client_id,
          });
        return sendPage(reply, 200, 'Sign-in denied', decidedPage(false, name));
      }
      if (!client || (await ownerIsBanned(deps.db, client.ownerId)))
        return sendPage(reply, 403, 'Error', errorPage(APPLICATION_SUSPENDED));
      const allowed = await sudoOrRefuse(request, reply, singleParam(request.body, 'confirm_password'), {
        home: DEVICE_PATH,
        signedOut: (_request, reply) => reply.redirect(`/login?next=${encodeURIComponent(DEVICE_PATH)}`, 303),
        refuse: (request, reply, refusal) =>
          showConfirm(
            request,
            reply,
            session,
            found,
            now,
            refusal.status,
            refusal.error ?? 'Enter your password to allow this device.',
          ),
      });
      if (!allowed) return reply;
      const approved = await deps.db.transaction().execute(async (trx) => {
        const decided = await decideDeviceCode(
          trx,
          hash,
          { status: 'approved', userId: session.userId, authTime: session.signedInAt },
          now,
        );
        if (!decided) return false;
        await endApprovalsBeyond(
          trx,
          { device_code_hash: hash, user_id: session.userId, client_id: found.row.client_id },
          deps.grants,
        );
        // The user's approval, as the consent page keeps one: listed among their applications with what
        // it may do from now on, not only once the device has collected its tokens.
        await addToApproval(
          trx,
          {
            userId: session.userId,
            clientId: found.row.client_id,
            scopes: found.row.scope.split(' ').filter(Boolean),
          },
          now,
        );
        await recordEvent(trx, act, {
          userId: session.userId,
          kind: 'device.approved',
          clientId: found.row.client_id,
          detail: found.row.scope,
        });
        return true;
      });
      if (!approved)
        return askForCode(
          request,
          reply,
          session,
          400,
          '',
          'That code is no longer valid. Check your device.',
        );
      return sendPage(reply, 200, 'Device signed in', decidedPage(true, name));
    },
  );
}
