// Route schemas compiled on first use. Fastify compiles every route's validators (Ajv) and response
// serializers (fast-json-stringify) while the app starts, and that code generation is the largest part of
// what tokend allocates at start-up beyond loading its modules. Here Fastify's own compilers, taken from
// their packages' public entry points and given the same options, compile a route's schema the first
// time a request of that route needs it; a route never called costs nothing. The first request of each
// route pays its compile once (about a millisecond).
//
// Fastify reads two properties of the validator it holds: `errors` after a failed validation, and
// `schemaEnv` to decide whether to hand Ajv the request as parent data (so that Ajv may replace the whole
// part). The lazy validator forwards both to the compiled one.
import { createRequire } from 'node:module';
import type AjvCompiler from '@fastify/ajv-compiler';
import type SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

// The compilers' packages (and Ajv with them) are loaded on the first compile too: they are CommonJS,
// so a synchronous require() of their public entry points can load them at that moment.
const require = createRequire(import.meta.url);
const loadAjvCompiler = () => require('@fastify/ajv-compiler') as typeof AjvCompiler;
const loadSerializerSelector = () =>
  require('@fastify/fast-json-stringify-compiler') as typeof SerializerSelector;

type Factories = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
type BuildValidator = AjvCompiler.BuildCompilerFromPool;
type BuildSerializer = NonNullable<Factories['buildSerializer']>;

/** A value made on first call, then kept. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

interface Validator {
  (...args: unknown[]): unknown;
  errors?: unknown;
  schemaEnv?: unknown;
}

/** A validator that compiles its schema when first used, then behaves as the compiled one. */
export function lazyValidator(compile: () => Validator): Validator {
  const compiled = once(compile);
  const validate = function (this: unknown, ...args: unknown[]) {
    return compiled().apply(this, args);
  } as Validator;
  Object.defineProperties(validate, {
    errors: { get: () => compiled().errors, enumerable: true },
    schemaEnv: { get: () => compiled().schemaEnv, enumerable: true },
  });
  return validate;
}

/** A serializer that compiles its schema when first used. */
export function lazySerializer(compile: () => (data: unknown) => string): (data: unknown) => string {
  const compiled = once(compile);
  return (data) => compiled()(data);
}

type RouteValidator = ReturnType<ReturnType<BuildValidator>>;

/**
 * What the apps of this process compiled, by the text of the schema and of the compiler's options: each
 * schema is compiled once however many apps one process builds (a test file builds one per test). Only
 * where no shared schemas were added (tokend adds none), so the text alone decides what is compiled. A
 * compiled validator keeps nothing between calls but `errors`, which Fastify reads right after its
 * synchronous call; a serializer keeps nothing.
 */
const compiled = new Map<string, Validator | ((data: unknown) => string)>();

function compiledOnce<T extends Validator | ((data: unknown) => string)>(
  key: string | undefined,
  compile: () => T,
): T {
  if (key === undefined) return compile();
  const known = compiled.get(key) as T | undefined;
  if (known !== undefined) return known;
  const made = compile();
  compiled.set(key, made);
  return made;
}

/** The key of a schema compiled with `options`, or undefined where shared schemas take part. */
const keyOf = (kind: string, externalSchemas: unknown, options: unknown, part: unknown, schema: unknown) =>
  externalSchemas === undefined || Object.keys(externalSchemas as object).length === 0
    ? JSON.stringify([kind, options ?? null, part ?? null, schema])
    : undefined;

const buildValidator: BuildValidator = (externalSchemas, ajvOptions) => {
  // Even Ajv, and its instance with its formats, wait for the first compile.
  const compilerOf = once(() => loadAjvCompiler()()(externalSchemas, ajvOptions));
  // The lazy validator stands in for Ajv's: Fastify uses only its call, `errors` and `schemaEnv`.
  return (route, meta) => {
    // What Fastify hands over: { schema, method, url, httpPart } (the package's types call it a schema).
    const { schema, httpPart } = route as unknown as { schema?: unknown; httpPart?: unknown };
    return lazyValidator(() =>
      compiledOnce(
        keyOf('validator', externalSchemas, ajvOptions, httpPart, schema),
        () => compilerOf()(route, meta) as unknown as Validator,
      ),
    ) as unknown as RouteValidator;
  };
};

const buildSerializer: BuildSerializer = (externalSchemas, serializerOptions) => {
  const compilerOf = once(() => loadSerializerSelector()()(externalSchemas, serializerOptions));
  return (route) =>
    lazySerializer(() =>
      compiledOnce(keyOf('serializer', externalSchemas, serializerOptions, null, route.schema), () =>
        compilerOf()(route),
      ),
    );
};

/** Fastify's `ajv` option: wrong JSON types are refused (400), never coerced: "5" is not an id. */
export const AJV_OPTIONS = { customOptions: { coerceTypes: false, allErrors: false } } as const;

/** Fastify's `schemaController` option that compiles each route's schemas on first use. */
export const lazySchemaController: NonNullable<FastifyServerOptions['schemaController']> = {
  compilersFactory: { buildValidator, buildSerializer },
};
