// A Dockerfile read as its stages (no Docker engine where kubebus is
// developed): continuations joined, comments dropped, `${ARG}` in FROM
// resolved from the global ARG defaults or the build arguments given. Read by
// the image tests and by check-pinned-images.ts.

export interface Stage {
  /** the image, ARGs resolved */
  readonly from: string;
  /** the image as written (`${NODE_IMAGE}`) */
  readonly fromAsWritten: string;
  readonly name?: string;
  readonly lines: string[];
}

export interface Dockerfile {
  /** the global ARGs (before the first FROM) and their defaults */
  readonly args: Readonly<Record<string, string>>;
  readonly stages: readonly Stage[];
}

export function parseDockerfile(
  text: string,
  buildArgs: Readonly<Record<string, string>> = {},
): Dockerfile {
  const instructions = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const line of instructions) {
    const arg = /^ARG\s+(\w+)(?:=(\S*))?$/i.exec(line);
    if (arg !== null && stages.length === 0) {
      args[arg[1] ?? ''] = arg[2] ?? '';
      continue;
    }
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?$/i.exec(line);
    if (from !== null) {
      const written = from[1] ?? '';
      stages.push({
        from: written.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, braced?: string, bare?: string) => {
          const name = braced ?? bare ?? '';
          return buildArgs[name] ?? args[name] ?? '';
        }),
        fromAsWritten: written,
        ...(from[2] === undefined ? {} : { name: from[2] }),
        lines: [],
      });
    } else stages.at(-1)?.lines.push(line);
  }
  return { args, stages };
}
