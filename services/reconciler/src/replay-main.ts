// `npm run replay -- <namespace/name>`: the DatabaseCluster reconciler replayed
// over an object's recorded history, as a dry run. Reads the environment and
// the command line; the work is in replay.ts.
import { loadConfig } from '@kubebus/shared/config';
import { loadKubeConfig } from '@kubebus/shared/kube';
import { createLogger } from '@kubebus/shared/obs';
import { connect } from '@nats-io/transport-node';
import { BackupBuckets } from './databasecluster/backup-bucket.js';
import { DatabaseClusterReconciler } from './databasecluster/reconciler.js';
import { GROUP, PLURAL } from './databasecluster/spec.js';
import { ReplayEnvSchema, formatReplay, replay, type ReplayEnv } from './replay.js';

const target = process.argv[2];
if (target === undefined || !target.includes('/')) {
  process.stderr.write('usage: npm run replay -- <namespace/name> [--json]\n');
  process.exit(2);
}
let env: ReplayEnv;
try {
  env = loadConfig(ReplayEnvSchema, process.env);
} catch (error) {
  process.stderr.write(`replay: ${(error as Error).message}\n`);
  process.exit(2);
}
const [namespace = '', name = ''] = target.split('/', 2);
const nc = await connect({
  servers: env.KUBEBUS_NATS_URL.split(','),
  ...(env.KUBEBUS_NATS_USER === undefined ? {} : { user: env.KUBEBUS_NATS_USER }),
  ...(env.KUBEBUS_NATS_PASSWORD === undefined ? {} : { pass: env.KUBEBUS_NATS_PASSWORD }),
});
const buckets = new BackupBuckets(nc);
try {
  const steps = await replay({
    nc,
    kubeConfig: await loadKubeConfig(env.KUBECONFIG, process.env),
    key: { group: GROUP, resource: PLURAL, namespace, name },
    log: createLogger({ service: 'replay', level: env.KUBEBUS_LOG_LEVEL }),
    build: (tools) =>
      new DatabaseClusterReconciler({
        ...tools,
        // answers as the real buckets would, and changes nothing
        buckets: {
          ensure: async (uid) => ((await buckets.exists(uid)) ? 'exists' : 'created'),
          remove: async (uid) => ((await buckets.exists(uid)) ? 'removed' : 'absent'),
        },
      }),
  });
  process.stdout.write(
    process.argv.includes('--json') ? `${JSON.stringify(steps, null, 2)}\n` : formatReplay(steps),
  );
} catch (error) {
  process.stderr.write(`replay: ${(error as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await nc.close();
}
