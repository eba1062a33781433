// The one shell of every server-rendered page: the document around a page's body (the theme, the icon),
// and the headers that keep it out of caches and frames. Each family of pages brings its own stylesheet
// (after the theme) and policy.
import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { Html, html } from './html.ts';
import { FAVICON_PATH, THEME_CSS } from './theme.ts';
import type { Asset } from './assets.ts';

export interface PageShell {
  /** the family's own rules, after the shared theme, in the one inline stylesheet the policy allows by its hash */
  css: string;
  /** image sources beyond this server's own (which the icon needs), e.g. `https:` for avatars */
  imageSources?: readonly string[];
  /** the policy's directives after `default-src 'none'`, the stylesheet's `style-src` and `img-src`, in order */
  policy: readonly string[];
  /** stylesheets served as files (src/web/assets.ts), linked after the inline one, in order */
  stylesheets?: readonly Asset[];
  /** scripts served as files, each loaded deferred (the policy's `script-src` must allow them) */
  scripts?: readonly Asset[];
}

declare module 'fastify' {
  interface FastifyReply {
    /** SERVER_NAME: whose server the pages are (app.ts decorates every reply with it) */
    serverName: string;
  }
}

function layout(title: string, body: Html, style: Html, head: Html, serverName: string): Html {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>${title} · ${serverName}</title>
        <link rel="icon" href="${FAVICON_PATH}" type="image/svg+xml" />
        ${style} ${head}
      </head>
      <body>
        <main>
          <p class="brand"><img src="${FAVICON_PATH}" alt="" width="28" height="28" />${serverName}</p>
          ${body}
        </main>
      </body>
    </html>`;
}

export type PageSender = (reply: FastifyReply, status: number, title: string, body: Html) => FastifyReply;

/** The Content-Security-Policy of the pages in `shell`, whose stylesheet is `css`. */
function pagePolicy(shell: PageShell, css: string): string {
  const cssHash = createHash('sha256').update(css).digest('base64');
  return [
    "default-src 'none'",
    `style-src 'sha256-${cssHash}'`,
    ["img-src 'self'", ...(shell.imageSources ?? [])].join(' '),
    // Stylesheet elements: the inline one by its hash, and the family's files, which only this server's
    // asset routes serve as text/css (every answer is nosniff, so nothing else here loads as a stylesheet).
    ...(shell.stylesheets?.length ? [`style-src-elem 'sha256-${cssHash}' 'self'`] : []),
    ...shell.policy,
  ].join('; ');
}

/** A sender of pages in `shell`: `send(reply, status, title, body)`. */
export function pageSender(shell: PageShell): PageSender {
  const css = THEME_CSS + shell.css;
  const contentSecurityPolicy = pagePolicy(shell, css);
  // Built outside the template so that formatting the template never changes the hashed text.
  const style = new Html(`<style>${css}</style>`);
  const head = html`${(shell.stylesheets ?? []).map((file) => html`<link rel="stylesheet" href="${file.path}" />`)}${(
    shell.scripts ?? []
  ).map((file) => html`<script src="${file.path}" defer></script>`)}`;
  return (reply, status, title, body) =>
    reply
      .code(status)
      .header('Content-Type', 'text/html; charset=utf-8')
      .header('Cache-Control', 'no-store')
      .header('Content-Security-Policy', contentSecurityPolicy)
      .header('X-Frame-Options', 'DENY')
      .header('X-Content-Type-Options', 'nosniff')
      .send(layout(title, body, style, head, reply.serverName ?? 'tokend').value);
}
