// kubebus generate <operator>: its CRD, RBAC per role and NATS users per role.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { crdOf } from '../api/crd.js';
import { natsUsersOf } from '../generate/nats-users.js';
import { rbacOf } from '../generate/rbac.js';
import { ROLES } from '../host/role-configs.js';
import { operatorArgument, usageError, type CommandLine } from './commands.js';

const USAGE =
  'kubebus generate <operator.ts|.js> [--out <dir>] [--namespace <ns>] [--watch-namespaces a,b] [--only crd,rbac,nats]';
const NAMESPACE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const PARTS = ['crd', 'rbac', 'nats'] as const;

function yamlDocuments(objects: readonly object[]): string {
  return objects.map((object) => `---\n${stringify(object, { lineWidth: 0 })}`).join('');
}

export async function generate(line: CommandLine): Promise<void> {
  const only = line.values['only'];
  const parts =
    typeof only === 'string'
      ? only.split(',').map((part) => {
          const known = PARTS.find((name) => name === part.trim());
          return known ?? usageError(`--only takes ${PARTS.join(', ')}; got "${part}"`);
        })
      : PARTS;
  const namespace =
    typeof line.values['namespace'] === 'string' ? line.values['namespace'] : 'kubebus';
  if (!NAMESPACE.test(namespace)) usageError(`--namespace "${namespace}" is not a namespace name`);
  const watched = line.values['watch-namespaces'];
  const watchNamespaces =
    typeof watched === 'string'
      ? watched
          .split(',')
          .map((ns) => ns.trim())
          .filter((ns) => ns !== '')
      : [];
  for (const ns of watchNamespaces)
    if (!NAMESPACE.test(ns)) usageError(`--watch-namespaces: "${ns}" is not a namespace name`);
  const operator = await operatorArgument(line, USAGE);
  if (watchNamespaces.length > 0 && operator.for.scope === 'Cluster')
    usageError(
      `${operator.for.kind} is cluster-scoped: it cannot be watched in some namespaces only`,
    );

  const files = {
    'crds.yaml': parts.includes('crd') ? yamlDocuments([crdOf(operator.for)]) : undefined,
    'rbac.yaml': parts.includes('rbac')
      ? yamlDocuments(rbacOf(operator, namespace, ROLES, watchNamespaces))
      : undefined,
    'nats-users.conf': parts.includes('nats') ? natsUsersOf(operator, ROLES) : undefined,
  };
  const out = line.values['out'];
  if (typeof out === 'string') {
    mkdirSync(out, { recursive: true });
    for (const [name, text] of Object.entries(files))
      if (text !== undefined) {
        writeFileSync(join(out, name), text);
        process.stdout.write(`wrote ${join(out, name)}\n`);
      }
    return;
  }
  // stdout: YAML for kubectl apply -f -; the NATS users only when asked for alone
  const yaml = [files['crds.yaml'], files['rbac.yaml']].filter((text) => text !== undefined);
  process.stdout.write(yaml.length > 0 ? yaml.join('') : (files['nats-users.conf'] ?? ''));
}
