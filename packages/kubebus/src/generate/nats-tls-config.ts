// The transport sections of a nats-server configuration: TLS on the client
// port, and a cluster whose routes must present both a certificate signed by
// the cluster's CA and the route user's password. No secret is written here:
// the password and the route URLs (which carry it) are environment references
// nats-server resolves at start, set from a Secret. The shipped configurations
// and the test bed's servers are written by these same functions.

/** PEM files: a server certificate, its key, and the CA that verifies peers. */
export interface NatsTlsFiles {
  readonly cert: string;
  readonly key: string;
  readonly ca: string;
}

/** Where cert-manager's Secret (tls.crt, tls.key, ca.crt) is mounted in the NATS pods. */
export const NATS_TLS_DIR = '/etc/nats-tls';
export const mountedTlsFiles: NatsTlsFiles = {
  cert: `${NATS_TLS_DIR}/tls.crt`,
  key: `${NATS_TLS_DIR}/tls.key`,
  ca: `${NATS_TLS_DIR}/ca.crt`,
};

export const ROUTE_USER = 'route';
/** the route user's password, from a Secret */
export const ROUTE_PASSWORD_VARIABLE = 'KUBEBUS_ROUTE_PASSWORD';
/** the list of route URLs, each carrying the route user's credentials */
export const ROUTES_VARIABLE = 'KUBEBUS_NATS_ROUTES';
/** the address a server's peers reach it at (a name its certificate holds, not the pod IP) */
export const ROUTE_ADVERTISE_VARIABLE = 'KUBEBUS_ROUTE_ADVERTISE';

/** The file beside nats-server.conf that holds the cluster block (empty for one server). */
export const CLUSTER_FILE = 'cluster.conf';

/**
 * The top of a shipped configuration: clients over TLS only, monitoring on
 * the pod's loopback, the cluster (if any) from cluster.conf.
 */
export function transportSection(tls: NatsTlsFiles): string[] {
  return [
    'listen: 0.0.0.0:4222',
    "# monitoring (/connz, /routez, /varz) answers on the pod's loopback only: the",
    '# probes run inside the pod, and no other pod can list connections or users',
    'http: 127.0.0.1:8222',
    ...clientTlsBlock(tls),
    `# one server: ${CLUSTER_FILE} is empty; the ha overlay puts the routes there`,
    `include ./${CLUSTER_FILE}`,
  ];
}

/** cluster.conf of one server: nothing. */
export const SINGLE_SERVER_CLUSTER = `# One NATS server: no cluster. The ha overlay replaces this file with a cluster\n# block (route TLS and authorization); see deploy/kubernetes/overlays/ha.\n`;

/** cluster.conf of the StatefulSet's cluster, as the ha overlay ships it. */
export function statefulSetCluster(): string {
  return (
    [
      '# The NATS cluster of the ha overlay (kubebus generate writes the base; this file',
      '# is checked against packages/kubebus/src/generate/nats-tls-config.ts). Routes',
      "# need a certificate from the cluster's CA and the route password; the password",
      '# and the route URLs carrying it come from the environment (the Secret), never',
      '# from this file.',
      ...clusterBlock({
        name: 'kubebus',
        listen: '0.0.0.0:6222',
        tls: mountedTlsFiles,
        advertiseFromEnvironment: true,
      }),
    ].join('\n') + '\n'
  );
}

/**
 * The client port's `tls` block. `verifyClients` asks every client for a
 * certificate signed by the CA (mTLS); without it, clients are authenticated
 * by user and password over the encrypted connection.
 */
export function clientTlsBlock(files: NatsTlsFiles, verifyClients = false): string[] {
  return [
    'tls {',
    ...tlsFields(files, verifyClients).map((line) => `  ${line}`),
    '  # a client that does not speak TLS is refused, never served in plaintext',
    '}',
  ];
}

/** The `cluster` block: route TLS with verification, and route authorization. */
export function clusterBlock(options: {
  readonly name: string;
  readonly listen: string;
  readonly tls: NatsTlsFiles;
  /** an environment reference for `advertise`, or none (loopback) */
  readonly advertiseFromEnvironment?: boolean;
}): string[] {
  return [
    'cluster {',
    `  name: ${options.name}`,
    `  listen: ${JSON.stringify(options.listen)}`,
    ...(options.advertiseFromEnvironment === true
      ? [`  advertise: $${ROUTE_ADVERTISE_VARIABLE}`]
      : []),
    '  # a server without the route password is refused as a route',
    '  authorization {',
    `    user: ${ROUTE_USER}`,
    `    password: $${ROUTE_PASSWORD_VARIABLE}`,
    '    timeout: 2',
    '  }',
    '  # and so is one without a certificate signed by the cluster CA',
    '  tls {',
    ...tlsFields(options.tls, true).map((line) => `    ${line}`),
    '  }',
    `  routes: $${ROUTES_VARIABLE}`,
    '}',
  ];
}

/**
 * The value of KUBEBUS_NATS_ROUTES for `hostPorts`: a nats-server list whose
 * URLs carry the route user's credentials. `password` may be a Kubernetes
 * `$(VARIABLE)` reference, expanded in the pod's environment.
 */
export function routesValue(hostPorts: readonly string[], password: string): string {
  return `[${hostPorts
    .map((hostPort) => JSON.stringify(`nats-route://${ROUTE_USER}:${password}@${hostPort}`))
    .join(', ')}]`;
}

function tlsFields(files: NatsTlsFiles, verify: boolean): string[] {
  return [
    `cert_file: ${JSON.stringify(files.cert)}`,
    `key_file: ${JSON.stringify(files.key)}`,
    `ca_file: ${JSON.stringify(files.ca)}`,
    `verify: ${String(verify)}`,
    'timeout: 5',
  ];
}
