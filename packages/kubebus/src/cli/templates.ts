// What `kubebus init` writes. The operator and its test are the StaticSite
// example (examples/staticsite), built in at bundle time so that what a new
// project starts from is exactly what kubebus' own CI tests.
import { readFileSync } from 'node:fs';

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

export function projectFiles(name: string): Record<string, string> {
  const version = typeof KUBEBUS_VERSION === 'string' ? KUBEBUS_VERSION : '0.1.0';
  const tsx = typeof KUBEBUS_TSX_VERSION === 'string' ? KUBEBUS_TSX_VERSION : '4.23.15';
  const manifest = {
    name,
    version: '0.1.0',
    private: true,
    type: 'module',
    engines: { node: '>=20.19' },
    scripts: {
      dev: 'kubebus dev operator.ts',
      start: 'kubebus run operator.ts',
      generate: 'kubebus generate operator.ts --out deploy',
      test: 'node --import tsx --test operator.test.ts',
    },
    dependencies: { kubebus: `^${version}`, zod: '^4.1.0' },
    devDependencies: { tsx: tsx },
  };
  return {
    'package.json': `${JSON.stringify(manifest, null, 2)}\n`,
    'operator.ts': example('operator.ts'),
    'operator.test.ts': example('operator.test.ts'),
    Dockerfile: [
      '# One image for every role: kubebus run operator.ts [--role watcher|reconciler|status-writer]',
      'FROM node:22-bookworm-slim',
      'ENV NODE_ENV=production',
      'WORKDIR /operator',
      'COPY package.json package-lock.json* ./',
      'RUN npm install --omit=dev --no-audit --no-fund',
      'COPY operator.ts ./',
      '# numeric: the kubelet checks runAsNonRoot against a uid, not a name',
      'USER 10001:10001',
      'ENTRYPOINT ["node_modules/.bin/kubebus", "run", "operator.ts"]',
      '',
    ].join('\n'),
    '.gitignore': 'node_modules/\n',
    '.dockerignore': 'node_modules/\n',
    'README.md': [
      `# ${name}`,
      '',
      'A Kubernetes operator on [kubebus](https://www.npmjs.com/package/kubebus).',
      '',
      '    npm install',
      '    npm run dev        # real apiserver + NATS on loopback, the CRD installed, the operator running',
      '    npm test           # the operator against real servers (kubebus/testing)',
      '    npm run generate   # deploy/: the CRD, RBAC per role, NATS users per role',
      '',
      'The first `dev` or `test` builds kube-apiserver, etcd and nats-server from their Go',
      'modules (Go >= 1.26 on PATH; 10-20 minutes, then cached in ~/.cache/kubebus).',
      '',
    ].join('\n'),
  };
}
