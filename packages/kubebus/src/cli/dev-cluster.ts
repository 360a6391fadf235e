// Which cluster `kubebus dev` runs against, as kopf and pepr choose: the
// current kube context when it answers, else the loopback servers; or what
// --cluster says. The reason is printed, so the choice is never a surprise.
import { usageError } from './commands.js';

export type Cluster = 'local' | 'existing';

export interface ClusterChoice {
  readonly cluster: Cluster;
  /** one line for the person: why this cluster */
  readonly why: string;
}

/** What the probe of the kubeconfig found (testing/existing-cluster.ts). */
export type ProbeResult =
  | { readonly answers: true; readonly context: string; readonly server: string }
  | { readonly answers: false; readonly reason: string };

export function clusterOption(value: string | boolean | undefined): Cluster | undefined {
  if (value === undefined) return undefined;
  if (value === 'local' || value === 'existing') return value;
  return usageError(`--cluster takes existing or local; got ${JSON.stringify(value)}`);
}

export async function chooseCluster(
  requested: Cluster | undefined,
  probe: () => Promise<ProbeResult>,
): Promise<ClusterChoice> {
  if (requested === 'local') return { cluster: 'local', why: 'loopback servers (--cluster local)' };
  const found = await probe();
  if (found.answers)
    return {
      cluster: 'existing',
      why: `the context ${found.context} (${found.server})${requested === undefined ? '; --cluster local for loopback servers instead' : ''}`,
    };
  if (requested === 'existing')
    return usageError(
      `--cluster existing: ${found.reason}; start the cluster, pick another with --context, or use --cluster local`,
    );
  return { cluster: 'local', why: `loopback servers: ${found.reason}` };
}
