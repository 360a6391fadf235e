// `npm run build`: ESM bundles under dist/, with kubebus' own libraries
// bundled in and third-party packages left to node_modules. The container
// image runs these with plain node (no TypeScript at run time).
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const shared = JSON.parse(readFileSync(`${root}/shared/package.json`, 'utf8')) as {
  dependencies: Record<string, string>;
};
// each service's main; the kubebus binary (run any operator: all roles, or one);
// the example operator, compiled, so `kubebus run` needs no TypeScript at run time
const entries: Record<string, string> = {
  watcher: 'services/watcher/src/main.ts',
  reconciler: 'services/reconciler/src/main.ts',
  'status-writer': 'services/status-writer/src/main.ts',
  kubebus: 'packages/kubebus/src/cli/main.ts',
  'operators/databasecluster': 'examples/databasecluster/operator.ts',
};

for (const [name, entry] of Object.entries(entries)) {
  await build({
    entryPoints: [`${root}/${entry}`],
    outfile: `${root}/dist/${name}.js`,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    conditions: ['source'],
    sourcemap: true,
    external: [...Object.keys(shared.dependencies), 'cloudevents', '@nats-io/*', 'tsx', 'tsx/*'],
    logLevel: 'warning',
  });
  process.stdout.write(`built ${name}\n`);
}
