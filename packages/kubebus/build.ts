// Builds the kubebus package: the public entry and the CLI bundled to ESM
// under dist/ (the workspace libraries bundled in, npm dependencies left to
// node_modules), and the public entry's type declarations.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const manifest = JSON.parse(readFileSync(`${here}/package.json`, 'utf8')) as {
  version: string;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
};

rmSync(`${here}/dist`, { recursive: true, force: true });
await build({
  entryPoints: {
    index: `${here}/src/index.ts`,
    testing: `${here}/src/testing.ts`,
    cli: `${here}/src/cli/main.ts`,
  },
  outdir: `${here}/dist`,
  bundle: true,
  splitting: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  conditions: ['source'],
  sourcemap: true,
  external: [
    ...Object.keys(manifest.dependencies),
    ...Object.keys(manifest.peerDependencies),
    '@nats-io/*',
    'tsx/*',
  ],
  define: {
    KUBEBUS_VERSION: JSON.stringify(manifest.version),
    KUBEBUS_TSX_VERSION: JSON.stringify(manifest.dependencies['tsx']),
    KUBEBUS_INIT_FILES: JSON.stringify(
      Object.fromEntries(
        ['operator.ts', 'operator.test.ts'].map((file) => [
          file,
          readFileSync(`${here}/../../examples/staticsite/${file}`, 'utf8'),
        ]),
      ),
    ),
  },
  logLevel: 'warning',
});
// The test kit's servers are built from these (once, cached in ~/.cache/kubebus).
cpSync(`${here}/../../test/bed/servers`, `${here}/dist/servers`, { recursive: true });
// The public types: only src/index.ts and what it reaches (zod and its own files).
execFileSync(
  process.execPath,
  [`${here}/../../node_modules/typescript/bin/tsc`, '-p', `${here}/tsconfig.types.json`],
  { stdio: 'inherit' },
);
process.stdout.write(`built kubebus ${manifest.version} into ${here}dist\n`);
