// The commands of the kubebus binary that take an operator module. The rest
// (status, history, tail, lag, dlq, topology) are the bus tools of @kubebus/cli.
export const USAGE = `usage: kubebus <command> [options]

operators
  kubebus init <dir>
      a new operator project: package.json, operator.ts, its test, a Dockerfile
  kubebus run <operator.ts|.js> [--role all|watcher|reconciler|status-writer]
      run an operator against KUBECONFIG and KUBEBUS_NATS_URL; all roles in one
      process by default, one role per process in production
  kubebus dev <operator.ts|.js> [--no-stand-in] [--log-level debug|info|warn]
      real kube-apiserver, etcd and nats-server on loopback, the CRD installed,
      the operator running with a readable log (first run builds the servers: Go)
  kubebus generate <operator.ts|.js> [--out <dir>] [--namespace <ns>] [--watch-namespaces a,b] [--only crd,rbac,nats]
      the CRD, least-privilege RBAC per role and NATS users per role
      (YAML on stdout; with --out: crds.yaml, rbac.yaml, nats-users.conf);
      --watch-namespaces: Roles in those namespaces instead of ClusterRoles
  kubebus replay <operator.ts|.js> <namespace/name> [--from <seq>] [--to <seq>] [--json]
      re-run the operator over an object's recorded history as a dry run, with
      what it reads as it was then, and the writes it would make as diffs;
      exit 1 when a revision's status differs from what was recorded

bus
  kubebus status <kind|resource[.group]> <namespace/name | name>   why it is (not) Ready
  kubebus history <kind|resource[.group]> <namespace/name | name>
  kubebus tail [resource[.group]] [--namespace <ns>] [--name <name>] [--json]
  kubebus lag
  kubebus dlq list [--origin <c>] [--code <code>] [--since <1h>] | inspect <seq> | redrive <seq>... | redrive --all
  kubebus topology apply|check [--replicas 1|3|5]
      create or update the streams and buckets, as the NATS admin user (the services'
      own users may not); check: say what is missing or differs, exit 1 if anything is
  (kubebus <command> --help: that command's options; -o table|json|yaml; --server/--user/--creds/--context)

  kubebus version     this client's version, and the NATS server's and apiserver's it is pointed at
environment: KUBEBUS_NATS_URL (required), KUBEBUS_NATS_USER, KUBEBUS_NATS_PASSWORD[_FILE],
KUBECONFIG, KUBEBUS_LOG_LEVEL, KUBEBUS_HEALTH_PORT; see docs/configuration.md
`;

/** One line on stderr and exit 2: the command line or the configuration is wrong. */
export function usageError(message: string): never {
  process.stderr.write(`kubebus: ${message}\n`);
  process.exit(2);
}

export interface CommandLine {
  readonly positionals: readonly string[];
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
}

/** The operator module named first on the command line, loaded; or exit 2 saying why. */
export async function operatorArgument(
  line: CommandLine,
  usage: string,
): Promise<import('../api/operator.js').Operator> {
  const file = line.positionals[0];
  if (file === undefined) return usageError(`missing the operator module: ${usage}`);
  const { loadOperator } = await import('../host/load-operator.js');
  try {
    return await loadOperator(file);
  } catch (error) {
    return usageError((error as Error).message);
  }
}
