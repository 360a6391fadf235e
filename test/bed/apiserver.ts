// kube-apiserver with TLS, client-certificate authentication, RBAC and
// service-account signing, as a real cluster runs it.
import { join } from 'node:path';
import { serverBinary } from './binaries.js';
import { httpCall } from './http.js';
import { pem, type ClientCert, type Pki } from './pki.js';
import { freePort } from './ports.js';
import { ServerProcess } from './process.js';

export interface ApiserverConfig {
  readonly port: number;
  readonly etcdUrl: string;
  readonly pki: Pki;
  readonly admin: ClientCert;
  readonly logFile: string;
  readonly extraArgs: readonly string[];
}

export async function apiserverConfig(
  dir: string,
  etcdUrl: string,
  pki: Pki,
  admin: ClientCert,
  extraArgs: readonly string[] = [],
): Promise<ApiserverConfig> {
  return {
    port: await freePort(),
    etcdUrl,
    pki,
    admin,
    logFile: join(dir, 'kube-apiserver.log'),
    extraArgs,
  };
}

export function apiserverUrl(config: ApiserverConfig): string {
  return `https://127.0.0.1:${config.port}`;
}

export async function startApiserver(config: ApiserverConfig): Promise<ServerProcess> {
  const { pki } = config;
  const server = ServerProcess.start({
    name: 'kube-apiserver',
    binary: serverBinary('kube-apiserver'),
    logFile: config.logFile,
    args: [
      `--etcd-servers=${config.etcdUrl}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${config.port}`,
      `--tls-cert-file=${pki.serverCert}`,
      `--tls-private-key-file=${pki.serverKey}`,
      `--client-ca-file=${pki.caCert}`,
      '--authorization-mode=RBAC',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${pki.serviceAccountPub}`,
      `--service-account-signing-key-file=${pki.serviceAccountKey}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      '--allow-privileged=true',
      '--endpoint-reconciler-type=none',
      `--cert-dir=${pki.dir}`,
      '--v=1',
      ...config.extraArgs,
    ],
  });
  const tls = adminTls(config);
  await server.waitReady(async () => {
    const res = await httpCall(`${apiserverUrl(config)}/readyz`, { tls });
    return res.status === 200;
  }, 90_000);
  return server;
}

export function adminTls(config: ApiserverConfig) {
  return {
    ca: pem(config.pki.caCert),
    cert: pem(config.admin.cert),
    key: pem(config.admin.key),
  };
}
