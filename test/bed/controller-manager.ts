// kube-controller-manager with only the controllers an operator test needs:
// the garbage collector (owner references), the namespace lifecycle, service
// account tokens, ClusterRole aggregation — without it the bootstrap roles
// admin, edit and view have no rules, and binding them proves nothing about
// RBAC (a real cluster refuses a binding whose rules the writer lacks) — and
// volume protection, without which a deleted PersistentVolumeClaim stays
// Terminating for ever (its kubernetes.io/pvc-protection finalizer). No
// workload controllers: no kubelet runs their pods (the stand-in reports
// Deployments and StatefulSets ready).
import { join } from 'node:path';
import { serverBinary } from './binaries.js';
import { httpCall } from './http.js';
import { freePort } from './ports.js';
import { ServerProcess } from './process.js';

export async function startControllerManager(
  dir: string,
  kubeconfigPath: string,
  serviceAccountKey: string,
): Promise<ServerProcess> {
  const port = await freePort();
  const server = ServerProcess.start({
    name: 'kube-controller-manager',
    binary: serverBinary('kube-controller-manager'),
    logFile: join(dir, 'kube-controller-manager.log'),
    args: [
      `--kubeconfig=${kubeconfigPath}`,
      `--authentication-kubeconfig=${kubeconfigPath}`,
      `--authorization-kubeconfig=${kubeconfigPath}`,
      [
        '--controllers=garbage-collector-controller',
        'namespace-controller',
        'serviceaccount-controller',
        'clusterrole-aggregation-controller',
        'persistentvolumeclaim-protection-controller',
        'persistentvolume-protection-controller',
        // type-checks ValidatingAdmissionPolicies (their status.typeChecking)
        'validatingadmissionpolicy-status-controller',
      ].join(','),
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${port}`,
      `--cert-dir=${join(dir, 'kcm-certs')}`,
      `--service-account-private-key-file=${serviceAccountKey}`,
      '--v=1',
    ],
  });
  await server.waitReady(async () => {
    // Its serving certificate is self-signed; this only asks whether it is up.
    const res = await httpCall(`https://127.0.0.1:${port}/healthz`, {
      tls: { rejectUnauthorized: false },
    });
    return res.status === 200;
  }, 60_000);
  return server;
}
