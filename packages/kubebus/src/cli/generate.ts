// kubebus generate <operator>: a deployable package for it (--out): a
// kustomize base and a Helm chart; without --out, its CRD and RBAC on
// stdout (or, with --only nats, its NATS users).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import { crdOf } from '../api/crd.js';
import { serviceTarget } from '../api/conversion-target.js';
import { conversionWebhookObjects } from '../generate/conversion-webhook.js';
import { natsUsersOf } from '../generate/nats-users.js';
import { FORMATS, packageFiles, type Format } from '../generate/package-files.js';
import { rbacOf } from '../generate/rbac.js';
import { rbacWarnings } from '../generate/rbac-warnings.js';
import { schemaWarnings } from '../generate/schema-warnings.js';
import { DEFAULT_NAMESPACE } from '../generate/settings.js';
import { yamlDocuments } from '../generate/yaml-documents.js';
import { ROLES } from '../host/role-configs.js';
import type { Host } from './command-spec.js';
import { operatorArgument, stringOption, usageError, type CommandLine } from './commands.js';

const USAGE =
  'kubebus generate <operator.ts|.js> [--out <dir>] [--namespace <ns>] [--image <ref>] [--module <path in the image>] [--format kustomize|helm|all] [--watch-namespaces a,b] [--only crd,rbac|nats]';
const NAMESPACE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const PARTS = ['crd', 'rbac', 'nats'] as const;
/** What stdout holds without --only: the YAML to `kubectl apply -f -`. */
const YAML_PARTS = ['crd', 'rbac'] as const;

const text = stringOption;

export async function generate(
  line: CommandLine,
  host: Pick<Host, 'stdout' | 'stderr'>,
): Promise<void> {
  const only = text(line, 'only');
  const parts: readonly (typeof PARTS)[number][] =
    only === undefined
      ? YAML_PARTS
      : only.split(',').map((part) => {
          const known = PARTS.find((name) => name === part.trim());
          return known ?? usageError(`--only takes ${PARTS.join(', ')}; got "${part}"`);
        });
  if (parts.includes('nats') && parts.some((part) => part !== 'nats'))
    usageError(
      '--only nats prints nats-server configuration, not YAML for kubectl: ask for it alone (--only nats)',
    );
  const namespace = text(line, 'namespace') ?? DEFAULT_NAMESPACE;
  if (!NAMESPACE.test(namespace)) usageError(`--namespace "${namespace}" is not a namespace name`);
  const watchNamespaces = (text(line, 'watch-namespaces') ?? '')
    .split(',')
    .map((ns) => ns.trim())
    .filter((ns) => ns !== '');
  for (const ns of watchNamespaces)
    if (!NAMESPACE.test(ns)) usageError(`--watch-namespaces: "${ns}" is not a namespace name`);
  const formatText = text(line, 'format') ?? 'all';
  const format: Format =
    FORMATS.find((known) => known === formatText) ??
    usageError(`--format takes ${FORMATS.join(', ')}; got "${formatText}"`);
  const file = line.positionals[0];
  const operator = await operatorArgument(line, USAGE);
  if (watchNamespaces.length > 0 && operator.for.scope === 'Cluster')
    usageError(
      `${operator.for.kind} is cluster-scoped: it cannot be watched in some namespaces only`,
    );

  // on stderr: stdout stays the YAML to apply
  for (const warning of [
    ...rbacWarnings(operator, watchNamespaces),
    ...schemaWarnings(operator.for),
  ])
    host.stderr.write(`kubebus generate: warning: ${warning}\n`);

  const out = text(line, 'out');
  if (out !== undefined) {
    if (only !== undefined)
      usageError('--only is for stdout; with --out the whole package is written');
    const given = text(line, 'module');
    const modulePath = given ?? file ?? '';
    // by default the module sits in the image where it sits here, from the
    // project's directory (kubebus init's Dockerfile): a path outside it is this machine's
    if (
      given === undefined &&
      (isAbsolute(modulePath) || normalize(modulePath).split(sep)[0] === '..')
    )
      usageError(
        `--module: ${modulePath} is a path on this machine, not in the image; say where the module sits in the image (--module operator.ts for kubebus init's Dockerfile)`,
      );
    const image = text(line, 'image');
    if (image === undefined)
      host.stderr.write(
        `kubebus generate: warning: no --image: the Deployments run kubebus-${operator.name}:latest, a tag that moves (every node may run another build); give the image you push, by digest or version (--image registry.example/${operator.name}:1.0.0)\n`,
      );
    const files = packageFiles(operator, ROLES, {
      namespace,
      image: image ?? `kubebus-${operator.name}:latest`,
      module: modulePath,
      watchNamespaces,
      format,
    });
    for (const [path, content] of Object.entries(files)) {
      const target = join(out, path);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, content);
    }
    host.stdout.write(`wrote ${Object.keys(files).length} files under ${out}\n`);
    return;
  }
  // stdout: YAML for kubectl apply -f -; the NATS users only when asked for (alone)
  const yaml = [
    parts.includes('crd')
      ? yamlDocuments([
          crdOf(operator.for, serviceTarget(operator.for, namespace)),
          ...conversionWebhookObjects(operator, { namespace, extraLabels: {} }),
        ])
      : undefined,
    parts.includes('rbac')
      ? yamlDocuments(rbacOf(operator, namespace, ROLES, watchNamespaces))
      : undefined,
  ].filter((part) => part !== undefined);
  host.stdout.write(
    yaml.length > 0 ? yaml.join('') : parts.includes('nats') ? natsUsersOf(operator, ROLES) : '',
  );
}
