// The one shell of every server-rendered page: the document around a page's body, and the headers that
// keep it out of caches and frames. Each family of pages brings its own stylesheet and policy.
import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { Html, html } from './html.ts';

export interface PageShell {
  /** the one inline stylesheet; the Content-Security-Policy allows it by its hash */
  css: string;
  /** the policy's directives after `default-src 'none'` and the stylesheet's `style-src`, in order */
  policy: readonly string[];
  /** more elements for the head (an icon link, a script) */
  head?: Html;
}

function layout(title: string, body: Html, style: Html, head: Html | undefined): Html {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>${title} · tokend</title>
        ${style} ${head}
      </head>
      <body>
        <main>${body}</main>
      </body>
    </html>`;
}

export type PageSender = (reply: FastifyReply, status: number, title: string, body: Html) => FastifyReply;

/** A sender of pages in `shell`: `send(reply, status, title, body)`. */
export function pageSender(shell: PageShell): PageSender {
  const cssHash = createHash('sha256').update(shell.css).digest('base64');
  const contentSecurityPolicy = ["default-src 'none'", `style-src 'sha256-${cssHash}'`, ...shell.policy].join(
    '; ',
  );
  // Built outside the template so that formatting the template never changes the hashed text.
  const style = new Html(`<style>${shell.css}</style>`);
  return (reply, status, title, body) =>
    reply
      .code(status)
      .header('Content-Type', 'text/html; charset=utf-8')
      .header('Cache-Control', 'no-store')
      .header('Content-Security-Policy', contentSecurityPolicy)
      .header('X-Frame-Options', 'DENY')
      .header('X-Content-Type-Options', 'nosniff')
      .send(layout(title, body, style, shell.head).value);
}
