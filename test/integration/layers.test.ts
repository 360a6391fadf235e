// The layering of docs/architecture.md, checked over the source files (no
// servers): no workspace imports one above it (shared < services < the public
// package), no service imports another service or an example, the runtime
// imports neither bus nor kube, the definition API nothing of shared but its
// error codes. eslint.config.js says the same in the editor; this also reads
// dynamic imports, `new URL(…, import.meta.url)` and package.json.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SERVICES = ['watcher', 'reconciler', 'status-writer', 'cli'] as const;

/** The repository path a specifier names (a workspace's own directory for a package), or undefined for npm. */
function targetOf(from: string, specifier: string): string | undefined {
  if (specifier.startsWith('.')) return posix.normalize(posix.join(posix.dirname(from), specifier));
  const shared = /^@kubebus\/shared(?:\/([^/]+))?/.exec(specifier);
  if (shared) return shared[1] === undefined ? 'shared/' : `shared/src/${shared[1]}/mod.ts`;
  const service = /^@kubebus\/([^/]+)/.exec(specifier);
  if (service) return `services/${service[1] ?? ''}/`;
  if (/^kubebus(\/|$)/.test(specifier)) return 'packages/kubebus/';
  return undefined;
}

/** 0 shared, 1 a service, 2 the public package; undefined outside the workspaces. */
function rankOf(path: string): number | undefined {
  if (path.startsWith('shared/')) return 0;
  if (path.startsWith('services/')) return 1;
  if (path.startsWith('packages/kubebus/')) return 2;
  return undefined;
}

const serviceOf = (path: string) => /^services\/([^/]+)\//.exec(path)?.[1];
const sharedModuleOf = (path: string) => /^shared\/src\/([^/]+)\//.exec(path)?.[1];

/** Why `from` may not import `specifier`, or undefined when it may. */
function violation(from: string, specifier: string): string | undefined {
  const target = targetOf(from, specifier);
  if (target === undefined) return undefined;
  const [rank, targetRank] = [rankOf(from), rankOf(target)];
  if (rank !== undefined && targetRank !== undefined && targetRank > rank)
    return 'imports a layer above its own';
  const service = serviceOf(from);
  if (service !== undefined && serviceOf(target) !== undefined && serviceOf(target) !== service)
    return 'a service imports another service';
  if (rank !== undefined && rank < 2 && /^(examples|test)\//.test(target))
    return 'shared/ and the services name no example and no test';
  const module = sharedModuleOf(from);
  const targetModule = sharedModuleOf(target);
  if (
    module === 'runtime' &&
    !from.endsWith('.test.ts') &&
    (targetModule === 'bus' || targetModule === 'kube')
  )
    return 'the runtime imports neither bus nor kube';
  if (
    module === 'definition' &&
    targetModule !== undefined &&
    !['definition', 'errors'].includes(targetModule)
  )
    return 'the definition API imports nothing of shared/ but errors';
  return undefined;
}

/** Every module a source file names: static and dynamic imports, re-exports, file URLs. */
function specifiersOf(source: string): string[] {
  // comment lines go (they may show an import as an example); code is left as it is
  const code = source.replace(/^\s*(\/\/|\/\*|\*).*$/gm, '');
  const forms = [
    /\b(?:import|export)\s[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g,
    /\bimport\s*['"]([^'"]+)['"]/g,
    /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
    /\bnew URL\(\s*[`'"]([^`'"$]+)[`'"$]/g,
  ];
  return forms.flatMap((form) => [...code.matchAll(form)].map((match) => match[1] ?? ''));
}

/** Why a workspace may not depend on one of these packages. */
function dependencyViolations(
  workspace: string,
  dependencies: Readonly<Record<string, string>>,
): string[] {
  return Object.keys(dependencies)
    .map((name) => {
      const reason = violation(`${workspace}/package.json`, name);
      return reason === undefined ? undefined : `${workspace} depends on ${name}: ${reason}`;
    })
    .filter((reason) => reason !== undefined);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(`${root}${dir}`, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.split('/').includes('node_modules'))
    .map((file) => `${dir}/${file}`);
}

const WORKSPACES = ['shared', ...SERVICES.map((name) => `services/${name}`), 'packages/kubebus'];

describe('the layers of the code', () => {
  it('knows the imports of the old cycle for what they were', () => {
    const bad: [string, string][] = [
      ['services/reconciler/src/operator/known-resources.ts', 'kubebus'],
      ['services/reconciler/src/main.ts', '../../../examples/databasecluster/operator.js'],
      ['services/watcher/src/watcher.ts', '@kubebus/reconciler/service'],
      ['services/cli/src/dlq.ts', '../../reconciler/src/replay.js'],
      ['shared/src/bus/subjects.ts', '@kubebus/watcher/service'],
      ['shared/src/runtime/controller.ts', '../kube/mod.js'],
      ['shared/src/runtime/controller.ts', '@kubebus/shared/bus'],
      ['shared/src/definition/operator.ts', '../runtime/mod.js'],
    ];
    for (const [from, specifier] of bad)
      assert.ok(violation(from, specifier), `${from} → ${specifier} passed`);
    const good: [string, string][] = [
      ['packages/kubebus/src/index.ts', '@kubebus/shared/definition'],
      ['packages/kubebus/src/cli/replay.ts', '@kubebus/reconciler/service'],
      ['services/reconciler/src/operator/status.ts', '@kubebus/shared/definition'],
      ['services/reconciler/src/service.ts', './operator/operator-plan.js'],
      ['shared/src/runtime/outcome.ts', '../definition/terminal-error.js'],
      ['shared/src/runtime/outcome.test.ts', '../kube/api-error.js'],
      ['shared/src/definition/terminal-error.ts', '../errors/mod.js'],
    ];
    for (const [from, specifier] of good)
      assert.equal(violation(from, specifier), undefined, `${from} → ${specifier}`);
    // the old reconciler's import line and dependency, as the scan reads them
    assert.deepEqual(
      specifiersOf("import {\n  apiVersionOf,\n  type Resource,\n} from 'kubebus';\n"),
      ['kubebus'],
    );
    assert.deepEqual(
      dependencyViolations('services/reconciler', { '@kubebus/shared': '0.1.0', kubebus: '0.1.0' }),
      ['services/reconciler depends on kubebus: imports a layer above its own'],
    );
  });

  for (const workspace of WORKSPACES) {
    it(`${workspace} imports nothing above it, no other service and no example`, () => {
      const found = sourceFiles(workspace === 'shared' ? 'shared/src' : `${workspace}/src`)
        .flatMap((file) =>
          specifiersOf(readFileSync(`${root}${file}`, 'utf8')).map((specifier) => ({
            file,
            specifier,
            reason: violation(file, specifier),
          })),
        )
        .filter(({ reason }) => reason !== undefined)
        .map(({ file, specifier, reason }) => `${file}: ${specifier} (${reason ?? ''})`);
      const manifest = JSON.parse(readFileSync(`${root}${workspace}/package.json`, 'utf8')) as {
        dependencies?: Record<string, string>;
        devDependencies?: Record<string, string>;
      };
      found.push(
        ...dependencyViolations(workspace, {
          ...manifest.dependencies,
          ...manifest.devDependencies,
        }),
      );
      assert.deepEqual(found, []);
    });
  }
});
