// What `kubebus init` writes. The operator and its test are the StaticSite
// example (examples/staticsite), built in at bundle time so that what a new
// project starts from is exactly what kubebus' own CI tests; --group and
// --kind rename its resource, --scope Cluster makes it cluster-scoped.
import { readFileSync } from 'node:fs';
import { imageArgLines, runtimeStageHead } from './runtime-image.js';

declare const KUBEBUS_VERSION: string | undefined;
declare const KUBEBUS_INIT_FILES: Record<string, string> | undefined;
declare const KUBEBUS_TSX_VERSION: string | undefined;

function example(file: string): string {
  if (typeof KUBEBUS_INIT_FILES === 'object') {
    const text = KUBEBUS_INIT_FILES[file];
    if (text !== undefined) return text;
  }
  // running from the repository's sources
  return readFileSync(new URL(`../../../../examples/staticsite/${file}`, import.meta.url), 'utf8');
}

/** The custom resource of a new project; the StaticSite example's where not given. */
export interface ProjectResource {
  readonly group?: string;
  readonly kind?: string;
  readonly scope?: 'Namespaced' | 'Cluster';
}

const EXAMPLE = { group: 'sites.example.com', kind: 'StaticSite' } as const;

/**
 * The example's operator made cluster-scoped: its children are namespaced, so
 * they are applied into a namespace it names (an owner without a namespace
 * has none to default them to). Each edit must find its text: when the
 * example changes, the unit test says which one no longer does.
 */
const CLUSTER_SCOPED: readonly (readonly [RegExp, string])[] = [
  [/scope: 'Namespaced',/g, `scope: 'Cluster',`],
  [
    /const \{ name, namespace \} = site\.metadata;/g,
    [
      'const { name } = site.metadata;',
      '    // cluster-scoped: its namespaced children go where it says, here one namespace',
      `    const namespace = 'default';`,
    ].join('\n'),
  ],
  [/metadata: \{ name \}, data:/g, 'metadata: { name, namespace }, data:'],
  [/metadata: \{ name, labels \},/g, 'metadata: { name, namespace, labels },'],
  [/\$\{namespace \?\? 'default'\}/g, '${namespace}'],
];

export function clusterScoped(operator: string): string {
  return CLUSTER_SCOPED.reduce((text, [pattern, replacement]) => {
    if (text.search(pattern) === -1)
      throw new Error(`kubebus init --scope Cluster: the example no longer has ${String(pattern)}`);
    return text.replace(pattern, replacement);
  }, operator);
}

/** The example's text with its resource renamed. */
function renamed(text: string, resource: ProjectResource): string {
  const { group = EXAMPLE.group, kind = EXAMPLE.kind } = resource;
  let out = text.replaceAll(`'${EXAMPLE.group}`, `'${group}`);
  if (kind !== EXAMPLE.kind)
    out = out
      // the example's own description would describe someone else's operator
      .replace(
        /^\/\/ A static web site:[^\n]*\n\/\/ [^\n]*\n/,
        `// ${kind}: scaffolded from kubebus' static-site example (a page in a ConfigMap,\n// served by nginx): replace its spec, status and reconcile with your own.\n`,
      )
      .replace(/\bStaticSite\b/g, kind)
      .replace(`name: '${EXAMPLE.kind.toLowerCase()}'`, `name: '${kind.toLowerCase()}'`)
      .replace(/^ *shortNames: \[.*\],\n/m, '');
  return out;
}

export function projectFiles(name: string, resource: ProjectResource = {}): Record<string, string> {
  const version = typeof KUBEBUS_VERSION === 'string' ? KUBEBUS_VERSION : '0.1.0';
  const tsx = typeof KUBEBUS_TSX_VERSION === 'string' ? KUBEBUS_TSX_VERSION : '^4.23.15';
  const manifest = {
    name,
    version: '0.1.0',
    private: true,
    type: 'module',
    engines: { node: '>=22.18' },
    scripts: {
      dev: 'kubebus dev operator.ts',
      start: 'kubebus run operator.ts',
      generate: 'kubebus generate operator.ts --out deploy',
      typecheck: 'tsc --noEmit',
      test: 'tsc --noEmit && node --import tsx --test operator.test.ts',
    },
    dependencies: { kubebus: `^${version}`, zod: '^4.1.0' },
    devDependencies: {
      // the types of the built-in kinds (kinds.Deployment, …): without it they are untyped
      '@kubernetes/client-node': '^1.4.0',
      '@types/node': '^22.18.0',
      tsx,
      typescript: '^5.9.3',
    },
  };
  const tsconfig = {
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noUncheckedIndexedAccess: true,
      verbatimModuleSyntax: true,
      // what Node's type stripping runs (the image has no tsx): no enum, no namespace
      erasableSyntaxOnly: true,
      skipLibCheck: true,
      noEmit: true,
      types: ['node'],
    },
    include: ['*.ts'],
  };
  return {
    'package.json': `${JSON.stringify(manifest, null, 2)}\n`,
    'tsconfig.json': `${JSON.stringify(tsconfig, null, 2)}\n`,
    'operator.ts': renamed(
      resource.scope === 'Cluster' ? clusterScoped(example('operator.ts')) : example('operator.ts'),
      resource,
    ),
    'operator.test.ts': renamed(example('operator.test.ts'), resource),
    Dockerfile: scaffoldDockerfile(),
    '.gitignore': 'node_modules/\n',
    // the image takes the project (COPY . ./) but none of these, at any depth;
    // the build stage copies *.tgz itself (a kubebus installed from its tarball)
    '.dockerignore': [
      '**/node_modules/',
      '**/.env',
      '**/.env.*',
      '**/*.pem',
      '**/*.key',
      '**/.npmrc',
      '**/kubeconfig*',
      '.git/',
      'deploy/',
      '',
    ].join('\n'),
    'README.md': [
      `# ${name}`,
      '',
      'A Kubernetes operator on [kubebus](https://www.npmjs.com/package/kubebus).',
      '',
      '    npm install',
      '    npm run dev        # kubebus dev operator.ts: real apiserver + NATS on loopback, the CRD installed, the operator running',
      '    npm test           # type-check, then the operator against real servers (kubebus/testing)',
      '    npm run generate   # kubebus generate operator.ts --out deploy: the CRD, RBAC and NATS users per role',
      '',
      'The first `dev` or `test` finds kube-apiserver, etcd and nats-server: KUBEBUS_ASSETS,',
      'else PATH, else the prebuilt releases, downloaded once with their checksums checked',
      'into ~/.cache/kubebus, else a build from source (Go >= 1.26 on PATH, about 20 minutes).',
      '`npm run dev` uses your current kube context (kind, k3d, minikube) when it answers.',
      '',
      'The image (`docker build -t ' + name + ':dev .`) runs `kubebus`; the Deployments',
      'in deploy/ pass it `run operator.ts --role <role>`.',
      '',
    ].join('\n'),
  };
}

/**
 * The scaffold's image, in the repository's pattern (runtime-image.ts): built
 * from the lockfile, run on Debian slim with the node binary alone.
 */
function scaffoldDockerfile(): string {
  return [
    '# One image for every role: the generated Deployments pass',
    '# `run operator.ts --role watcher|reconciler|status-writer` as args.',
    '# `build` installs from package-lock.json (npm install makes it); the runtime',
    '# has node and node_modules only: no npm, npx or corepack.',
    ...imageArgLines(),
    '',
    'FROM ${NODE_IMAGE} AS build',
    'WORKDIR /operator',
    '# *.tgz: a dependency installed from a tarball in the project',
    '# (`npm install ./kubebus-<version>.tgz`); none is fine',
    'COPY package.json package-lock.json *.tgz ./',
    '# --omit=optional too: tsx and @kubernetes/client-node, dev dependencies that kubebus',
    "# takes as optional peers, are kept by --omit=dev alone (npm's devOptional; 85 MB).",
    '# A dependency of yours with optional native parts (sharp, say) needs the flag gone.',
    'RUN npm ci --omit=dev --omit=optional --no-audit --no-fund',
    '',
    ...runtimeStageHead(),
    'WORKDIR /operator',
    'COPY --from=build /operator/node_modules ./node_modules',
    '# Node >= 22.18 runs operator.ts itself (type stripping): no tsx in the image.',
    '# The whole project, so modules operator.ts imports come too (.dockerignore',
    '# keeps node_modules, keys, .env, .npmrc, kubeconfigs, deploy/ and .git out)',
    'COPY . ./',
    '# numeric: the kubelet checks runAsNonRoot against a uid, not a name (the',
    "# generated Deployments' runAsUser)",
    'USER 1000:1000',
    'ENTRYPOINT ["node", "node_modules/kubebus/dist/cli.js"]',
    '# `docker run <image>` alone: every role in one process',
    'CMD ["run", "operator.ts"]',
    '',
  ].join('\n');
}
