// kubebus dev <operator>: the kopf-run experience. Against the current kube
// context when it answers (kind, k3d, minikube): the operator's CRD applied
// there, a nats-server started here unless KUBEBUS_NATS_URL names one. Else
// real kube-apiserver, etcd, kube-controller-manager and nats-server on
// loopback, with a stand-in for kubelets so workloads report ready. The
// operator runs with a readable log; Ctrl-C stops what dev started.
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { crdOf } from '../api/crd.js';
import type { TestEnvironment } from '../testing-api.js';
import type { Host } from './command-spec.js';
import { operatorArgument, stringOption, usageError, type CommandLine } from './commands.js';
import { chooseCluster, clusterOption } from './dev-cluster.js';
import { devExports } from './dev-exports.js';
import { devSettingsOf } from './dev-settings.js';

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
const USAGE =
  'kubebus dev <operator.ts|.js> [--cluster existing|local] [--context <name>] [--no-stand-in] [--log-level debug|info|warn]';

export async function dev(line: CommandLine, host: Host): Promise<void> {
  const operator = await operatorArgument(line, USAGE);
  const wanted = line.values['log-level'] ?? 'info';
  const level =
    LEVELS.find((known) => known === wanted) ??
    usageError(`--log-level takes ${LEVELS.join(', ')}; got ${JSON.stringify(wanted)}`);
  const context = stringOption(line, 'context');
  const say = (text: string) => host.stdout.write(`${text}\n`);
  const { probeExistingCluster } = await import('../testing/existing-cluster.js');
  const choice = await chooseCluster(clusterOption(line.values['cluster']), () =>
    probeExistingCluster(context === undefined ? {} : { context }, host.env),
  );
  const existing = choice.cluster === 'existing';
  say(`kubebus dev: ${choice.why}`);
  const natsNamed = host.env['KUBEBUS_NATS_URL'];
  say(
    existing
      ? natsNamed === undefined || natsNamed === ''
        ? "starting nats-server on loopback, TLS and a user made for this run, the cluster's store kept across runs (KUBEBUS_NATS_URL names none)"
        : `using NATS at ${natsNamed} (KUBEBUS_NATS_URL)`
      : [
          'starting kube-apiserver, etcd, kube-controller-manager and nats-server',
          '(from KUBEBUS_ASSETS, else PATH at supported versions, else prebuilt releases downloaded once, else built once with Go >= 1.26: about 20 minutes)',
        ].join('\n'),
  );
  const { startEnvironment } = await import('../testing/environment.js');
  const environment = await startEnvironment(
    {
      cluster: choice.cluster,
      controllerManager: true,
      // loopback servers' logs and data go with the run (63 MB a run) unless asked for, as a
      // test bed's; on a cluster, the nats-server's log stays to be read (its keys do not)
      keepDir: existing || keptDir(host.env),
      // the objects outlive the run: so does what the bus holds of them (ctx.once's records)
      keepNatsStore: { operator: operator.name },
      ...(context === undefined ? {} : { context }),
    },
    host.env,
  );
  const store = environment.natsStore;
  if (store !== undefined)
    say(
      store.held === undefined
        ? `warning: ${store.unusable === undefined ? `another kubebus dev of this operator holds this cluster's NATS store (${store.dir})` : `the NATS store ${store.dir} cannot be used (${store.unusable})`}: this run's is new, so its ctx.once calls of existing objects are made again`
        : `NATS store: ${store.held.dir} (the history and ctx.once records of this cluster's objects; delete it to start afresh)`,
    );
  const standInWanted = !existing && line.values['no-stand-in'] !== true;
  const crd = crdOf(operator.for).metadata.name;
  const stop = async (code: number) => {
    await environment.stop();
    say(stoppedLine(environment, crd, host.env));
    process.exit(code);
  };
  // registered once the servers run: the test bed's own handler then leaves Ctrl-C to this
  host.interrupted().addEventListener('abort', () => void stop(0), { once: true });
  try {
    await environment.install(operator.for);
    say(`installed the CRD ${crd} (server-side apply)`);
    // the shell's behaviour settings, as `kubebus run` reads them (an invalid one: one line)
    const { settings, ignored } = devSettingsOf(host.env);
    for (const name of ignored)
      host.stderr.write(`kubebus dev: warning: ${name} is ignored: dev sets it itself\n`);
    await environment.run(operator, {
      logLevel: level,
      log: 'readable',
      env: settings,
      // the same version as `kubebus run` of the file: no upgrade sweep between the two
      module: resolve(line.positionals[0] ?? ''),
      // what kubebus status and lag show as the partitions' holder
      replicaId: `dev-${hostname()
        .replace(/[^-_a-zA-Z0-9]/g, '-')
        .slice(0, 40)}-${String(process.pid)}`,
    });
    // kept running until stop(), as kubelets are
    if (standInWanted) await environment.markWorkloadsReady();
    say(
      runningText(environment, operator, {
        noStandIn: line.values['no-stand-in'] === true,
        natsNamed: existing && natsNamed !== undefined && natsNamed !== '',
      }),
    );
  } catch (error) {
    // one line: an invalid setting's message names the variable on its next line
    host.stderr.write(`kubebus dev: ${(error as Error).message.replace(/\n\s*/g, ' ')}\n`);
    await stop(1);
  }
}

function runningText(
  environment: TestEnvironment,
  operator: {
    readonly name: string;
    readonly for: { readonly plural: string; readonly group: string; readonly scope: string };
  },
  options: { readonly noStandIn: boolean; readonly natsNamed: boolean },
): string {
  const existing = environment.cluster === 'existing';
  const contextFlag =
    existing && environment.context !== undefined ? ` --context ${environment.context}` : '';
  return [
    '',
    `operator ${operator.name} is running${existing ? ` against ${environment.context ?? environment.apiserverUrl}` : ''}. In another terminal:`,
    `  export ${devExports(environment, options.natsNamed)}`,
    `  kubectl${contextFlag} get ${operator.for.plural}`,
    `  kubebus history ${operator.for.plural}.${operator.for.group} ${operator.for.scope === 'Cluster' ? '<name>' : '<namespace/name>'}`,
    existing
      ? '  (the cluster runs the pods: no stand-in)'
      : options.noStandIn
        ? '  (no kubelet runs here: pods never become ready)'
        : '  (a stand-in reports Deployments and StatefulSets ready, as kubelets would)',
    existing
      ? `Ctrl-C stops the operator${environment.dir === '' ? '' : ' and nats-server'}; the CRD and your objects stay in the cluster.`
      : 'Ctrl-C stops everything.',
    '',
  ].join('\n');
}

/** KUBEBUS_KEEP_TESTBED=1 keeps the servers' logs and data after the run, as for a test bed. */
const keptDir = (env: Readonly<Record<string, string | undefined>>) =>
  env['KUBEBUS_KEEP_TESTBED'] === '1';

function stoppedLine(
  environment: TestEnvironment,
  crd: string,
  env: Readonly<Record<string, string | undefined>>,
): string {
  if (environment.cluster === 'local')
    return keptDir(env)
      ? `stopped; logs and data stay in ${environment.dir}`
      : "stopped (KUBEBUS_KEEP_TESTBED=1 keeps the servers' logs and data)";
  const kept = (environment as { natsStore?: { held?: { dir: string } } }).natsStore?.held?.dir;
  const nats =
    environment.dir === ''
      ? ''
      : ` and nats-server (its store stays in ${kept ?? environment.dir}${kept === undefined ? '' : `, its log in ${environment.dir}`})`;
  return `stopped the operator${nats}; the CRD ${crd} stays in the cluster (kubectl delete crd ${crd} removes it and its objects)`;
}
