// A Dockerfile's build stage run on the host, as far as it can be without a
// Docker engine: the build context is the directory less what .dockerignore
// names, each `COPY` from the context lands in a fresh directory, each `RUN`
// runs there through the shell. It shows whether the stage copies everything
// its `RUN` needs — a dependency installed from a tarball in the project, say.
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseDockerfile } from '../../deploy/scripts/dockerfile-stages.js';

const run = promisify(execFile);

/** `*` and `?` of a Dockerfile or .dockerignore pattern, in one path segment */
function globPattern(pattern: string): RegExp {
  const escaped = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped.replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]')}$`);
}

function ignoredBy(context: string): (name: string) => boolean {
  const file = join(context, '.dockerignore');
  const patterns = existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .map((line) => line.trim().replace(/\/$/, ''))
        .filter((line) => line !== '' && !line.startsWith('#'))
        .map(globPattern)
    : [];
  return (name) => patterns.some((pattern) => pattern.test(name));
}

/**
 * The context's top-level files COPY's sources name: a wildcard may match
 * nothing (BuildKit allows it), all of them matching nothing is an error
 * (the classic builder's "no source files were specified").
 */
function copySources(context: string, sources: readonly string[]): string[] {
  const ignored = ignoredBy(context);
  const names = readdirSync(context).filter((name) => !ignored(name));
  const found = sources.flatMap((source) => {
    if (source.includes('/'))
      throw new Error(`COPY ${source}: only top-level sources are supported here`);
    if (!/[*?]/.test(source)) {
      if (!names.includes(source)) throw new Error(`COPY ${source}: not in the build context`);
      return [source];
    }
    return names.filter((name) => globPattern(source).test(name));
  });
  if (found.length === 0) throw new Error(`COPY ${sources.join(' ')}: no source files`);
  return found;
}

/** Runs the Dockerfile's stage named `stage` from `context`; answers the directory it built. */
export async function runBuildStage(
  context: string,
  dockerfileText: string,
  stage = 'build',
): Promise<string> {
  const found = parseDockerfile(dockerfileText).stages.find((s) => s.name === stage);
  if (found === undefined) throw new Error(`the Dockerfile has no stage ${stage}`);
  const workdir = mkdtempSync(join(tmpdir(), 'kubebus-build-stage-'));
  try {
    await runLines(context, workdir, found.lines);
  } catch (error) {
    rmSync(workdir, { recursive: true, force: true });
    throw error;
  }
  return workdir;
}

async function runLines(context: string, workdir: string, lines: readonly string[]): Promise<void> {
  for (const line of lines) {
    const [instruction = '', ...words] = line.split(/\s+/);
    if (/^COPY$/i.test(instruction)) {
      if (words.some((word) => word.startsWith('--')))
        throw new Error(`${line}: COPY flags are not supported here`);
      const destination = words.at(-1);
      if (destination !== './' && destination !== '.')
        throw new Error(`${line}: only a copy into the workdir is supported here`);
      for (const name of copySources(context, words.slice(0, -1)))
        copyFileSync(join(context, name), join(workdir, name));
    } else if (/^RUN$/i.test(instruction)) {
      await run('sh', ['-c', words.join(' ')], { cwd: workdir, timeout: 300_000 });
    } else if (!/^WORKDIR$/i.test(instruction)) {
      // ENV, ARG, USER… would change what RUN does: not modelled, so not run as if absent
      throw new Error(`${line}: not supported here`);
    }
  }
}
