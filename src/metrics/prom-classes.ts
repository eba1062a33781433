// The one place tokend reaches inside a library: prom-client's four classes, each from its own file.
//
// prom-client's entry point also loads its Pushgateway (https, tls, zlib), cluster aggregation and default
// metrics: many more Node modules and much more resident memory (bench/HISTORY.md), which an idle
// server would hold for nothing. The package has no exports map, and each of these files
// exports the very class its index re-exports. test/unit/prom-classes.test.ts fails on an upgrade that
// would break that (an exports map, a moved file, a class that is no longer the index's own).
import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';

const load = createRequire(import.meta.url);

/** The files, by class; the test checks each against the package's entry point. */
export const PROM_CLASS_FILES = {
  Registry: 'prom-client/lib/registry.js',
  Counter: 'prom-client/lib/counter.js',
  Gauge: 'prom-client/lib/gauge.js',
  Histogram: 'prom-client/lib/histogram.js',
} as const;

export const Registry = load(PROM_CLASS_FILES.Registry) as typeof PromClient.Registry;
export const Counter = load(PROM_CLASS_FILES.Counter) as typeof PromClient.Counter;
export const Gauge = load(PROM_CLASS_FILES.Gauge) as typeof PromClient.Gauge;
export const Histogram = load(PROM_CLASS_FILES.Histogram) as typeof PromClient.Histogram;
