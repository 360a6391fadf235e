// `npm run build`: ESM bundles under dist/, with kubebus' own libraries
// bundled in and third-party packages left to node_modules. The container
// image runs these with plain node (no TypeScript at run time).
import { build } from 'esbuild';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const shared = JSON.parse(readFileSync(`${root}/shared/package.json`, 'utf8')) as {
  dependencies: Record<string, string>;
};
// the kubebus binary (every process is `kubebus run <operator> [--role …]`);
// the example operator, compiled, so `kubebus run` needs no TypeScript at run time
const entries: Record<string, string> = {
  kubebus: 'packages/kubebus/src/cli/main.ts',
  'operators/databasecluster': 'examples/databasecluster/operator.ts',
};

for (const [name, entry] of Object.entries(entries)) {
  await build({
    entryPoints: [`${root}/${entry}`],
    outfile: `${root}/dist/${name}.js`,
    bundle: true,
    platform: 'node',
    target: 'node22.18',
    format: 'esm',
    conditions: ['source'],
    sourcemap: true,
    external: [...Object.keys(shared.dependencies), 'cloudevents', '@nats-io/*', 'tsx', 'tsx/*'],
    logLevel: 'warning',
  });
  process.stdout.write(`built ${name}\n`);
}

// The entry points of the per-role images before ADR 0012 (dist/<role>.js),
// kept for one release so command lines written for them still work. Each is
// `kubebus run` of the bundled example with that role, nothing more: what the
// definition decides (KUBEBUS_CONTROLLERS, KUBEBUS_WORK_PARTITIONS) is ignored
// with a warning, as under `kubebus run`.
for (const role of ['watcher', 'reconciler', 'status-writer']) {
  writeFileSync(
    `${root}/dist/${role}.js`,
    [
      `// deprecated: kubebus run dist/operators/databasecluster.js --role ${role}`,
      `import { fileURLToPath } from 'node:url';`,
      `const operator = fileURLToPath(new URL('./operators/databasecluster.js', import.meta.url));`,
      `process.argv.splice(2, 0, 'run', operator, '--role', '${role}');`,
      `await import('./kubebus.js');`,
      '',
    ].join('\n'),
  );
  process.stdout.write(`wrote ${role} (kubebus run --role ${role})\n`);
}
