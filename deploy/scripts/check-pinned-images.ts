// Which image references kubebus ships, and whether a release has pinned them.
//   node --import tsx deploy/scripts/check-pinned-images.ts [--release]
//     [--overlay DIR]… [--values FILE] [--env-file FILE]
// Lists every reference (the Dockerfile's FROM with the build arguments in the
// environment, NODE_IMAGE and RUNTIME_IMAGE, as `docker build --build-arg`
// gets them; docker-compose.yml with --env-file, default .env.example; each
// kustomize DIR rendered, default deploy/kubernetes/base and deploy/knative;
// the chart's values, default deploy/helm/databasecluster/values.yaml). Exit 1
// when a reference goes through no setting, or, with --release, when one is
// not pinned by digest (name@sha256:…). Needs `kustomize` on PATH (or KUSTOMIZE).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseAllDocuments } from 'yaml';
import {
  composeImages,
  describeImage,
  dockerfileImages,
  helmImages,
  isPinned,
  manifestImages,
  type ImageReference,
} from './pinned-images.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const at = (path: string) => relative(root, path) || '.';

function usage(message: string): never {
  process.stderr.write(`check-pinned-images: ${message}\n`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    options: {
      release: { type: 'boolean', default: false },
      overlay: { type: 'string', multiple: true },
      values: { type: 'string' },
      'env-file': { type: 'string' },
    },
  });
} catch (error) {
  usage((error as Error).message);
}
const { values: options } = parsed;

function read(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    return usage(`cannot read ${path}: ${(error as Error).message}`);
  }
}

/** KEY=VALUE lines of an env file (compose's .env syntax, without quoting). */
function envFile(path: string): Record<string, string> {
  return Object.fromEntries(
    [...read(path).matchAll(/^([A-Z0-9_]+)=(.*)$/gm)].map((m) => [m[1] ?? '', m[2] ?? '']),
  );
}

function kustomizeBuild(dir: string): unknown[] {
  const binary = process.env['KUSTOMIZE'] ?? 'kustomize';
  const result = spawnSync(binary, ['build', dir], { encoding: 'utf8' });
  if (result.error !== undefined || result.status !== 0)
    usage(
      `kustomize build ${at(dir)} failed (${result.error?.message ?? result.stderr.split('\n')[0] ?? ''}); put kustomize on PATH or set KUSTOMIZE`,
    );
  return parseAllDocuments(result.stdout).map((doc) => doc.toJSON() as unknown);
}

const dockerfile = join(root, 'Dockerfile');
const buildArgs = Object.fromEntries(
  ['NODE_IMAGE', 'RUNTIME_IMAGE'].flatMap((name) => {
    const value = process.env[name];
    return value === undefined || value === '' ? [] : [[name, value]];
  }),
);
const envPath = options['env-file'] ?? join(root, '.env.example');
const overlays = options.overlay ?? [
  join(root, 'deploy/kubernetes/base'),
  join(root, 'deploy/knative'),
];
const valuesPath = options.values ?? join(root, 'deploy/helm/databasecluster/values.yaml');

const references: ImageReference[] = [
  ...dockerfileImages(at(dockerfile), read(dockerfile), buildArgs),
  ...composeImages('docker-compose.yml', read(join(root, 'docker-compose.yml')), envFile(envPath)),
  ...overlays.flatMap((dir) => manifestImages(at(dir), kustomizeBuild(dir))),
  ...helmImages(at(valuesPath), read(valuesPath)),
];
for (const reference of references) process.stdout.write(`${describeImage(reference)}\n`);

const fixed = references.filter((r) => r.setting === '' && !isPinned(r.image));
const unpinned = references.filter((r) => !isPinned(r.image));
if (fixed.length > 0) {
  process.stderr.write(
    `check-pinned-images: ${fixed.length} reference(s) no setting reaches: make each a build argument, a .env variable or a values entry\n`,
  );
  process.exit(1);
}
if (options.release && unpinned.length > 0) {
  process.stderr.write(
    `check-pinned-images: --release: not pinned by digest: ${[...new Set(unpinned.map((r) => r.image))].join(', ')}\n`,
  );
  process.exit(1);
}
