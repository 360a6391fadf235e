// kubebus init <dir>: a new operator project — package.json depending on
// kubebus, operator.ts, a test on the test kit, a Dockerfile.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { usageError, type CommandLine } from './commands.js';
import { projectFiles } from './templates.js';

export function init(line: CommandLine): void {
  const target = line.positionals[0];
  if (target === undefined) usageError('missing the directory: kubebus init <dir>');
  const dir = resolve(target);
  if (existsSync(dir) && readdirSync(dir).length > 0)
    usageError(`${target} is not empty: give a new or empty directory`);
  const name = basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-');
  mkdirSync(dir, { recursive: true });
  for (const [file, text] of Object.entries(projectFiles(name))) {
    writeFileSync(join(dir, file), text);
    process.stdout.write(`wrote ${join(target, file)}\n`);
  }
  process.stdout.write(`\nnext: cd ${target} && npm install && npm run dev\n`);
}
