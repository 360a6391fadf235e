// Builds the kubebus package: the public entry and the CLI bundled to ESM
// under dist/ (the workspace libraries bundled in, npm dependencies left to
// node_modules), and the public entry's type declarations.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
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
  target: 'node22.18',
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
    KUBEBUS_TSX_VERSION: JSON.stringify(manifest.peerDependencies['tsx']),
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
// The public types: src/index.ts and src/testing-api.ts, and the definition
// API they re-export from the shared library, which ships in dist/shared (the
// workspace is not a package of its own): its `@kubebus/shared/<x>` specifiers
// in the declarations become relative paths.
for (const config of ['tsconfig.types.json', 'tsconfig.types.shared.json'])
  execFileSync(
    process.execPath,
    [`${here}/../../node_modules/typescript/bin/tsc`, '-p', `${here}/${config}`],
    { stdio: 'inherit' },
  );
linkSharedDeclarations(`${here}/dist`);
process.stdout.write(`built kubebus ${manifest.version} into ${here}dist\n`);

/** Points the declarations' shared-library specifiers at dist/shared; fails on one not shipped. */
function linkSharedDeclarations(dist: string): void {
  const specifier = /(['"])@kubebus\/shared\/([a-z]+)\1/g;
  for (const file of readdirSync(dist, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.d.ts')) continue;
    const path = join(dist, file);
    const linked = readFileSync(path, 'utf8').replace(
      specifier,
      (_whole, quote: string, subpath: string) => {
        if (!existsSync(join(dist, 'shared', subpath, 'mod.d.ts')))
          throw new Error(`${file} names @kubebus/shared/${subpath}, which dist/ does not ship`);
        const target = relative(dirname(path), join(dist, 'shared', subpath, 'mod.js'));
        return `${quote}${target.startsWith('.') ? target : `./${target}`}${quote}`;
      },
    );
    if (/['"]@kubebus\//.test(linked))
      throw new Error(`${file} names a kubebus workspace the package does not ship`);
    writeFileSync(path, linked);
  }
}
