import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { HealthChecks, startHealthServer } from './health.js';
import { startServiceShell } from './service-shell.js';

describe('health endpoints', () => {
  const checks = new HealthChecks();
  checks.ready('nats', () => 'connection refused to 10.0.0.7:4222');

  it("withholds a failing check's reason off loopback, and names it on loopback", () => {
    assert.equal(
      checks.evaluate('ready', true).report,
      '[-]nats failed: reason withheld\ncheck failed\n',
    );
    assert.match(checks.evaluate('ready').report, /nats failed: connection refused to 10\.0\.0\.7/);
  });

  it('serves /metrics on the health port only when told to', async () => {
    const registry = new Registry();
    for (const metrics of [true, false]) {
      const server = await startHealthServer({
        host: '127.0.0.1',
        port: 0,
        checks,
        registry,
        metrics,
      });
      const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
      assert.equal(res.status, metrics ? 200 : 404);
      await server.close();
    }
  });

  it('refuses unauthenticated /metrics off loopback, in one line', async () => {
    await assert.rejects(
      startServiceShell({ service: 's', logLevel: 'error', health: { host: '0.0.0.0', port: 0 } }),
      /KUBEBUS_METRICS_AUTH=kubernetes/,
    );
  });
});
