// `npm run build`: one ESM bundle per service under dist/, with the shared
// library bundled in and third-party packages left to node_modules. The
// container image runs these with plain node (no TypeScript at run time).
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const shared = JSON.parse(readFileSync(`${root}/shared/package.json`, 'utf8')) as {
  dependencies: Record<string, string>;
};
const services = ['watcher', 'reconciler', 'status-writer', 'cli'];

for (const service of services) {
  await build({
    entryPoints: [`${root}/services/${service}/src/main.ts`],
    outfile: `${root}/dist/${service === 'cli' ? 'kubebus' : service}.js`,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    conditions: ['source'],
    sourcemap: true,
    external: [...Object.keys(shared.dependencies), 'cloudevents', '@nats-io/*'],
    logLevel: 'warning',
  });
  process.stdout.write(`built ${service}\n`);
}
