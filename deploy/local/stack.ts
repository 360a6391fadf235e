// `npm start`: the whole kubebus stack on loopback, for a newcomer. Real
// kube-apiserver, etcd, kube-controller-manager and nats-server (the test bed),
// the DatabaseCluster CRD, a watcher, two reconcilers and a status writer; then
// a sample DatabaseCluster, watched until it is Ready. Ctrl-C stops everything.
// NATS speaks TLS only, with a certificate from the bed's CA made for this run.
import { KubeClient } from '@kubebus/shared/kube';
import { Registry, restClientMetrics } from '@kubebus/shared/obs';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { TestBed } from '../../test/bed/testbed.js';
import { Pipeline, installDatabaseClusterCrd } from '../../test/support/pipeline.js';
// no kubelet on loopback: the test kit's stand-in reports workloads ready
import { startWorkloadStandIn } from '../../packages/kubebus/src/testing/workload-stand-in.js';

const say = (line: string) => process.stdout.write(`${line}\n`);
const sample = parse(
  readFileSync(fileURLToPath(new URL('../samples/databasecluster.yaml', import.meta.url)), 'utf8'),
) as { metadata: { name: string; namespace: string } };

say(
  'starting kube-apiserver, etcd, kube-controller-manager and nats-server (first run builds them) ...',
);
const bed = await TestBed.start({ controllerManager: true, keepDir: true, natsTls: true });
const tls = { KUBEBUS_NATS_CA: bed.pki.caCert };
const pipeline = new Pipeline(bed);
let stopKubelet: () => Promise<void> = async () => undefined;

let stopping = false;
async function stop(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    say('\nstopping ...');
    await stopKubelet();
    await pipeline.stop();
    await bed.stop();
    say(`stopped. Logs and data stay in ${bed.dir}`);
  }
  process.exit(code);
}
process.once('SIGINT', () => void stop(0));
process.once('SIGTERM', () => void stop(0));

try {
  await installDatabaseClusterCrd(bed);
  say('installed the DatabaseCluster CRD');
  await pipeline.watcher(tls);
  await pipeline.reconciler(tls);
  await pipeline.reconciler(tls);
  await pipeline.statusWriter(tls);
  say('started the watcher, two reconcilers and the status writer');

  const client = new KubeClient(bed.kubeConfig(), restClientMetrics(new Registry()));
  const standIn = startWorkloadStandIn(client, 1_000);
  stopKubelet = () => standIn.stop();
  const path = `/apis/example.kubebus.dev/v1alpha1/namespaces/${sample.metadata.namespace}/databaseclusters`;
  await client.request(path, { method: 'POST', body: sample });
  say(`applied the sample DatabaseCluster ${sample.metadata.namespace}/${sample.metadata.name}`);

  let phase = '';
  for (;;) {
    const cluster = await client.request<{ status?: { phase?: string; readyReplicas?: number } }>(
      `${path}/${sample.metadata.name}`,
    );
    const now = `${cluster.status?.phase ?? 'Pending'} (${cluster.status?.readyReplicas ?? 0} ready)`;
    if (now !== phase) say(`  ${sample.metadata.name}: ${(phase = now)}`);
    if (cluster.status?.phase === 'Ready') break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  say(
    [
      '',
      `DatabaseCluster ${sample.metadata.name} is Ready.`,
      'The stack keeps running; try:',
      `  export KUBECONFIG=${bed.kubeconfigPath}`,
      '  kubectl get databaseclusters,statefulsets,services,configmaps,secrets',
      `  NATS: ${bed.natsUrl}, CA ${bed.pki.caCert}`,
      `    (nats --tlsca ${bed.pki.caCert} -s ${bed.natsUrl} stream ls; kubebus status with KUBEBUS_NATS_CA set)`,
      `  logs: ${bed.dir}/*.log`,
      'Ctrl-C stops everything.',
    ].join('\n'),
  );
} catch (error) {
  process.stderr.write(`the stack failed: ${(error as Error).stack ?? String(error)}\n`);
  await stop(1);
}
