// The pages' static files (stylesheets, the one script): read once at start-up, each served at an address
// named by its content's hash, so that a browser may keep it for good and a changed file is a new address.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';

export interface Asset {
  /** where it is served: /assets/<name>-<hash>.<extension> */
  path: string;
  contentType: string;
  body: string;
}

const CONTENT_TYPES = {
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
} as const;

/** An asset of `body`, served as `name`.`kind` under a name that changes with its content. */
export function asset(name: string, kind: keyof typeof CONTENT_TYPES, body: string): Asset {
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 12);
  return { path: `/assets/${name}-${hash}.${kind}`, contentType: CONTENT_TYPES[kind], body };
}

/** The text of a file beside a module (`import.meta.url`). */
export const fileText = (base: string | URL, file: string): string =>
  readFileSync(new URL(file, base), 'utf8');

/**
 * Serves assets: cached for a year (their address changes with their content), never sniffed, and as
 * documents that load and run nothing of their own.
 */
export function serveAssets(app: FastifyInstance, assets: readonly Asset[]): void {
  for (const file of assets)
    app.get(file.path, { schema: { hide: true } }, async (_request, reply) =>
      reply
        .header('Content-Type', file.contentType)
        .header('Cache-Control', 'public, max-age=31536000, immutable')
        .header('X-Content-Type-Options', 'nosniff')
        .header('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'")
        .send(file.body),
    );
}
