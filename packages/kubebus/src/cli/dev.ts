// kubebus dev <operator>: the kopf-run experience. Real kube-apiserver, etcd,
// kube-controller-manager and nats-server on loopback (built once, cached),
// the operator's CRD installed, the operator running with a readable log, and
// a stand-in for kubelets so workloads report ready. Ctrl-C stops it all.
import { crdOf } from '../api/crd.js';
import { operatorArgument, usageError, type CommandLine } from './commands.js';

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
const USAGE = 'kubebus dev <operator.ts|.js> [--no-stand-in] [--log-level debug|info|warn]';

export async function dev(line: CommandLine): Promise<void> {
  const operator = await operatorArgument(line, USAGE);
  const wanted = line.values['log-level'] ?? 'info';
  const level =
    LEVELS.find((known) => known === wanted) ??
    usageError(`--log-level takes ${LEVELS.join(', ')}; got ${JSON.stringify(wanted)}`);
  const say = (text: string) => process.stdout.write(`${text}\n`);
  say('starting kube-apiserver, etcd, kube-controller-manager and nats-server');
  say(
    '(from KUBEBUS_ASSETS, else PATH at supported versions, else built once from their Go modules: Go >= 1.26, about 20 minutes)',
  );
  const { startEnvironment } = await import('../testing/environment.js');
  const environment = await startEnvironment({ controllerManager: true, keepDir: true });
  let standIn: NodeJS.Timeout | undefined;
  const stop = async (code: number) => {
    clearInterval(standIn);
    await environment.stop();
    say(`stopped; logs and data stay in ${environment.dir}`);
    process.exit(code);
  };
  process.once('SIGINT', () => void stop(0));
  process.once('SIGTERM', () => void stop(0));
  try {
    await environment.install(operator.for);
    say(`installed the CRD ${crdOf(operator.for).metadata.name}`);
    await environment.run(operator, { logLevel: level, log: 'readable' });
    if (line.values['no-stand-in'] !== true)
      standIn = setInterval(
        () => void environment.markWorkloadsReady().catch(() => undefined),
        1_000,
      );
    say(
      [
        '',
        `operator ${operator.name} is running. In another terminal:`,
        `  export KUBECONFIG=${environment.kubeconfigPath} KUBEBUS_NATS_URL=${environment.natsUrl}`,
        `  kubectl get ${operator.for.plural}`,
        `  kubebus history ${operator.for.plural}.${operator.for.group} <namespace/name>`,
        line.values['no-stand-in'] === true
          ? '  (no kubelet runs here: pods never become ready)'
          : '  (a stand-in reports Deployments and StatefulSets ready, as kubelets would)',
        'Ctrl-C stops everything.',
        '',
      ].join('\n'),
    );
  } catch (error) {
    process.stderr.write(`kubebus dev: ${(error as Error).message.split('\n')[0] ?? ''}\n`);
    await stop(1);
  }
}
