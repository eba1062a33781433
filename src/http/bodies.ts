// How request bodies are read. App-wide: JSON (an empty body counts as none; __proto__ and
// constructor.prototype keys are refused; a body that is not UTF-8 is refused too, instead of reaching a
// lookup with its bytes replaced by U+FFFD), and a 415 for any other labelled body. Inside {base_url}:
// every body is read as JSON whatever its Content-Type says, as the Ripple family's API does.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError } from './errors.ts';

/** A Content-Type Fastify can read: `type/subtype`, optionally followed by `;` and parameters. */
const MEDIA_TYPE = /^\s*[\w!#$%&'*+.^`|~-]+\/[\w!#$%&'*+.^`|~-]+\s*(?:;|$)/;

type ParserDone = (err: Error | null, body?: unknown) => void;

/** Reads a body as JSON; `badJson`, when given, replaces the message of a body that is not JSON. */
function jsonReader(app: FastifyInstance, badJson?: string) {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  return (request: FastifyRequest, body: string | Buffer, done: ParserDone) => {
    // A request no route takes gets its 404 or 405 whatever its body holds.
    if (request.is404) return done(null, undefined);
    let text: string;
    try {
      text = typeof body === 'string' ? body : utf8.decode(body);
    } catch {
      return done(new HttpError(400, 'Bad JSON: the body is not valid UTF-8.'), undefined);
    }
    if (text.trim() === '') return done(null, undefined);
    if (badJson === undefined) return parseJson(request, text, done);
    parseJson(request, text, (err, parsed) =>
      err ? done(new HttpError(400, badJson), undefined) : done(null, parsed),
    );
  };
}

/** The app-wide body parsers: JSON, and a 415 for anything else that is not empty. */
export function readBodies(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, jsonReader(app));
  // Outside {base_url} (health, metrics, the OAuth endpoints) any other body is a 415, not a string that
  // then fails the schema. The form-based pages and the OAuth back channel register their own, more
  // specific parser for forms in their contexts; {base_url} reads every body as JSON (readEveryBodyAsJson).
  app.removeContentTypeParser('text/plain');
  refuseOtherBodies(app, 'application/json');
}

/**
 * In this context, a non-empty body of a type no parser takes is a 415 that names the type to send. An
 * empty body counts as no body whatever its label (fetch() labels body '' as text/plain, curl -d '' as a
 * form).
 */
export function refuseOtherBodies(app: FastifyInstance, expected: string): void {
  const refusal = `Unsupported Content-Type: send the body as ${expected}.`;
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => {
    if (body.length === 0 || body.toString('utf8').trim() === '') return done(null, undefined);
    done(new HttpError(415, refusal), undefined);
  });
}

/**
 * Inside {base_url}, as the Ripple family's API does: a body is JSON whatever its Content-Type says:
 * absent, text/plain, a form (curl -d, Python requests' data=) or anything else. A label that is not even
 * a media type (`json`) is dropped first, or Fastify would refuse it with a 415 before any parser runs.
 */
export function readEveryBodyAsJson(api: FastifyInstance): void {
  api.addHook('onRequest', (request, _reply, done) => {
    const label = request.headers['content-type'];
    if (label !== undefined && !MEDIA_TYPE.test(label)) delete request.raw.headers['content-type'];
    done();
  });
  api.addContentTypeParser(
    '*',
    { parseAs: 'buffer' },
    jsonReader(
      api,
      'Bad JSON: the body is not valid JSON. The API reads every body as JSON, whatever its Content-Type.',
    ),
  );
}
