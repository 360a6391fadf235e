// What a person sees when `kubebus run` cannot start a role: one line per
// problem and exit status 2 — never a stack — and a warning for a misspelt
// KUBEBUS_ name.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { KNOWN_VARIABLES } from '@kubebus/shared/config';
import { z } from 'zod';
import { ReconcilerConfigSchema } from '../../services/reconciler/src/config.js';
import { StatusWriterConfigSchema } from '../../services/status-writer/src/config.js';
import { WatcherConfigSchema } from '../../services/watcher/src/config.js';
import { DATABASE_CLUSTER_OPERATOR, kubebusArgs } from '../support/services.js';

const services = ['watcher', 'reconciler', 'status-writer'] as const;
const emptyHome = mkdtempSync(join(tmpdir(), 'kubebus-home-'));

function start(service: (typeof services)[number], env: Record<string, string>) {
  const result = spawnSync(
    process.execPath,
    kubebusArgs('run', DATABASE_CLUSTER_OPERATOR, '--role', service),
    {
      encoding: 'utf8',
      timeout: 60_000,
      env: {
        PATH: process.env['PATH'] ?? '',
        // a home with no ~/.kube/config: what the machine running the test has is not the point
        HOME: emptyHome,
        KUBEBUS_NATS_URL: 'nats://127.0.0.1:1',
        KUBEBUS_HEALTH_PORT: '0',
        ...env,
      },
    },
  );
  return { status: result.status, stderr: result.stderr.trim().split('\n') };
}

describe('service start-up errors', { timeout: 300_000 }, () => {
  it('knows every variable a service reads (so none is warned about as misspelt)', () => {
    for (const schema of [WatcherConfigSchema, ReconcilerConfigSchema, StatusWriterConfigSchema]) {
      const input = schema instanceof z.ZodPipe ? schema.in : schema;
      assert.ok(input instanceof z.ZodObject);
      for (const name of Object.keys(input.shape).filter((n) => n.startsWith('KUBEBUS_')))
        assert.ok(KNOWN_VARIABLES.has(name), `${name} is missing from KNOWN_VARIABLES`);
    }
  });

  for (const service of services) {
    it(`${service}: a missing kubeconfig is one line and exit 2; a misspelt variable is warned about`, () => {
      const { status, stderr } = start(service, {
        KUBECONFIG: '/nonexistent/kubeconfig',
        KUBEBUS_PARTITIONS: '8',
      });
      assert.equal(status, 2, stderr.join('\n'));
      assert.deepEqual(stderr, [
        `kubebus run: warning: KUBEBUS_PARTITIONS is not a kubebus variable (misspelt?); ignored`,
        `kubebus run: KUBECONFIG names /nonexistent/kubeconfig, which does not exist: set KUBECONFIG to a readable kubeconfig file, or run in a pod with a service account`,
      ]);
    });
  }

  it('no kubeconfig at all outside a cluster says what to do', () => {
    const { status, stderr } = start('watcher', {});
    assert.equal(status, 2);
    assert.deepEqual(stderr, [
      'kubebus run: no kubeconfig (nor ~/.kube/config): set KUBECONFIG to a readable kubeconfig file, or run in a pod with a service account',
    ]);
  });

  it('refuses a lease renewal too slow for the lease TTL', () => {
    const { status, stderr } = start('status-writer', { KUBEBUS_LEASE_RENEW: '10s' });
    assert.equal(status, 2);
    assert.match(stderr.join('\n'), /KUBEBUS_LEASE_RENEW: at most 5s/);
  });

  it('a bad value names the variable and exits 2 without a stack', () => {
    const { status, stderr } = start('reconciler', { KUBEBUS_MAX_CONCURRENT: 'lots' });
    assert.equal(status, 2);
    assert.match(stderr.join('\n'), /KUBEBUS_MAX_CONCURRENT: .*got "lots"/);
    assert.doesNotMatch(stderr.join('\n'), /\n\s+at /);
  });
});
