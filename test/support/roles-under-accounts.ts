// Every role of an operator in this process, each with a token of its own
// ServiceAccount (as `kubebus generate` names them): each runs with exactly
// the RBAC generated for it, as in a cluster.
import type { Operator } from '@kubebus/shared/definition';
import { loadKubeConfig } from '@kubebus/shared/kube';
import { startServiceShell } from '@kubebus/shared/obs';
import type { TestBed } from '../bed/testbed.js';
import { roleConfigsOf, runOperator } from '../../packages/kubebus/src/host/run-operator.js';
import { ROLES } from '../../packages/kubebus/src/host/role-configs.js';
import { VERSION } from '../../packages/kubebus/src/cli/version.js';

export interface RunningRole {
  stop(): Promise<void>;
}

export async function runRolesUnderAccounts(
  bed: TestBed,
  operator: Operator,
  namespace: string,
): Promise<RunningRole[]> {
  const running: RunningRole[] = [];
  for (const role of ROLES) {
    const shell = await startServiceShell({
      service: `${operator.name}-${role}`,
      logLevel: 'warn',
      health: { host: '127.0.0.1', port: 0 },
    });
    const replicaId = `accounts-${role}`;
    const env = {
      KUBEBUS_NATS_URL: bed.natsUrl,
      KUBEBUS_HEALTH_PORT: '0',
      KUBEBUS_BACKOFF_BASE: '100ms',
      KUBEBUS_BACKOFF_CAP: '2s',
    };
    const handle = await runOperator({
      operator,
      roles: [role],
      configs: roleConfigsOf(operator, [role], env, replicaId),
      replicaId,
      kubeConfig: await loadKubeConfig(
        await bed.serviceAccountKubeconfig(namespace, `kubebus-${operator.name}-${role}`),
        {},
      ),
      shell,
      version: VERSION,
    });
    shell.started();
    running.push({
      async stop() {
        await handle.stop();
        await shell.health.close();
      },
    });
  }
  return running;
}
