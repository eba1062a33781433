// Hooks added to a route as it is declared (from an onRoute hook), for work that only some routes need
// or that needs the route's own pattern: the route then carries the hook, and no request has to ask
// which route it is on (request.routeOptions builds a new object on every read).
import type { RouteOptions } from 'fastify';

type RouteHookName = 'preHandler' | 'onResponse';
type RouteHook<K extends RouteHookName> = Extract<
  NonNullable<RouteOptions[K]>,
  (...args: never[]) => unknown
>;

/**
 * Adds `hook` to the route's `name` hooks, before its own or after them, in a new array (the options
 * a route was declared with are left as they were: Fastify declares a GET route's HEAD twin from them,
 * and its onRoute hooks then add the twin's own). Adding the same hook twice adds it once.
 */
export function addRouteHook<K extends RouteHookName>(
  route: RouteOptions,
  name: K,
  hook: RouteHook<K>,
  where: 'first' | 'last',
): void {
  const current = route[name];
  const hooks = (
    current === undefined ? [] : Array.isArray(current) ? [...current] : [current]
  ) as RouteHook<K>[];
  if (hooks.includes(hook)) return;
  if (where === 'first') hooks.unshift(hook);
  else hooks.push(hook);
  (route as Record<RouteHookName, unknown>)[name] = hooks;
}
