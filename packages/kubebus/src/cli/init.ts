// kubebus init <dir> [--group <g>] [--kind <K>] [--scope Namespaced|Cluster]: a new operator project —
// package.json depending on kubebus, operator.ts, a test on the test kit, a
// tsconfig its `npm test` type-checks with, a Dockerfile.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { stringOption, usageError, type CommandLine } from './commands.js';
import { projectFiles, type ProjectResource } from './templates.js';

const KIND = /^[A-Z][A-Za-z0-9]{0,62}$/;
const GROUP = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;

export function init(line: CommandLine): void {
  const target = line.positionals[0];
  if (target === undefined) usageError('missing the directory: kubebus init <dir>');
  const resource = resourceOptions(line);
  const dir = resolve(target);
  if (existsSync(dir) && readdirSync(dir).length > 0)
    usageError(`${target} is not empty: give a new or empty directory`);
  const name = basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-');
  mkdirSync(dir, { recursive: true });
  for (const [file, text] of Object.entries(projectFiles(name, resource))) {
    writeFileSync(join(dir, file), text);
    process.stdout.write(`wrote ${join(target, file)}\n`);
  }
  process.stdout.write(
    `\nnext: cd ${target} && npm install && npm run dev\n` +
      `(before kubebus is on the npm registry: copy its tarball into ${target} and\n` +
      ` \`npm install ./kubebus-<version>.tgz\` there first; the image builds from it too)\n`,
  );
}

function resourceOptions(line: CommandLine): ProjectResource {
  const group = stringOption(line, 'group');
  const kind = stringOption(line, 'kind');
  const scope = stringOption(line, 'scope');
  if (scope !== undefined && scope !== 'Namespaced' && scope !== 'Cluster')
    usageError(`--scope ${scope}: a resource is Namespaced or Cluster (scoped)`);
  if (kind !== undefined && !KIND.test(kind))
    usageError(`--kind ${kind}: a kind is UpperCamelCase letters and digits (StaticSite)`);
  if (group !== undefined && (!GROUP.test(group) || group.length > 253))
    usageError(`--group ${group}: an API group is a DNS name with a dot (sites.example.com)`);
  return {
    ...(group !== undefined && { group }),
    ...(kind !== undefined && { kind }),
    ...(scope !== undefined && { scope }),
  };
}
