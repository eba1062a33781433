// The fence around prom-client's internal files (src/metrics/prom-classes.ts): fails on an upgrade of
// prom-client that would break loading its classes one by one.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import * as promClient from 'prom-client';
import { Counter, Gauge, Histogram, PROM_CLASS_FILES, Registry } from '../../src/metrics/prom-classes.ts';

const load = createRequire(import.meta.url);

describe("prom-client's classes from their own files", () => {
  it('the package has no exports map that would refuse the files', () => {
    const manifest = load('prom-client/package.json') as { exports?: unknown };
    assert.equal(manifest.exports, undefined);
  });

  it("each file's export is the very class the entry point exports", () => {
    const fromFiles = { Registry, Counter, Gauge, Histogram };
    for (const name of Object.keys(PROM_CLASS_FILES) as Array<keyof typeof PROM_CLASS_FILES>) {
      assert.equal(typeof fromFiles[name], 'function', name);
      assert.equal(fromFiles[name], promClient[name], `${name} of ${PROM_CLASS_FILES[name]}`);
    }
  });

  it('the classes work together as the entry point documents them', async () => {
    const registry = new Registry();
    const counter = new Counter({ name: 'fence_total', help: 'h', labelNames: ['k'], registers: [registry] });
    const gauge = new Gauge({ name: 'fence_gauge', help: 'h', registers: [registry] });
    const histogram = new Histogram({
      name: 'fence_seconds',
      help: 'h',
      buckets: [0.1, 1],
      registers: [registry],
    });
    counter.inc({ k: 'a' }, 2);
    gauge.set(5);
    histogram.observe(0.5);
    assert.ok(counter instanceof promClient.Counter);
    assert.ok(registry instanceof promClient.Registry);
    const text = await registry.metrics();
    assert.match(text, /^fence_total\{k="a"\} 2$/m);
    assert.match(text, /^fence_gauge 5$/m);
    assert.match(text, /^fence_seconds_bucket\{le="1"\} 1$/m);
    assert.equal(registry.contentType, promClient.Registry.PROMETHEUS_CONTENT_TYPE);
  });
});
