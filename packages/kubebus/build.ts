// Builds the kubebus package: the public entry and the CLI bundled to ESM
// under dist/ (the workspace libraries bundled in, npm dependencies left to
// node_modules), and the public entry's type declarations.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const manifest = JSON.parse(readFileSync(`${here}/package.json`, 'utf8')) as {
  version: string;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
};

rmSync(`${here}/dist`, { recursive: true, force: true });
await build({
  entryPoints: { index: `${here}/src/index.ts`, cli: `${here}/src/cli/main.ts` },
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
  define: { KUBEBUS_VERSION: JSON.stringify(manifest.version) },
  banner: { js: '' },
  logLevel: 'warning',
});
// The public types: only src/index.ts and what it reaches (zod and its own files).
execFileSync(
  process.execPath,
  [`${here}/../../node_modules/typescript/bin/tsc`, '-p', `${here}/tsconfig.types.json`],
  { stdio: 'inherit' },
);
process.stdout.write(`built kubebus ${manifest.version} into ${here}dist\n`);
