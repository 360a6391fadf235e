// Why an operator module did not load, in one line: the error's first line
// and, for a syntax error, where it is (file:line) — which Node's ES module
// loader does not put in the error it throws, only in what it prints.
import { spawnSync } from 'node:child_process';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const LOCATION = /((?:file:\/\/)?\/[^\s():"']+):(\d+)(?::(\d+))?/;

export function describeLoadFailure(error: unknown, path: string): string {
  if (!(error instanceof Error)) return String(error);
  const lines = error.message.split('\n');
  // tsx (esbuild): "Transform failed with 1 error:\n/x/op.ts:2:10: ERROR: Unexpected ";""
  if (/^Transform failed with \d+ errors?:/.test(lines[0] ?? '')) {
    const detail = /^(.*?):(\d+):(\d+): ERROR: (.*)$/.exec(lines[1] ?? '');
    if (detail !== null)
      return `SyntaxError: ${detail[4]} (${shortPath(detail[1] ?? '')}:${detail[2]}:${detail[3]})`;
  }
  const first = lines[0] ?? '';
  const message =
    error.name === 'Error' || first.startsWith(error.name) ? first : `${error.name}: ${first}`;
  if (!(error instanceof SyntaxError)) return message;
  const where = stackLocation(error) ?? checkLocation(path);
  return where === undefined || message.includes(where) ? message : `${message} (${where})`;
}

/** A CommonJS syntax error's stack starts with file:line. */
function stackLocation(error: SyntaxError): string | undefined {
  const head = (error.stack ?? '').split('\n')[0] ?? '';
  const match = LOCATION.exec(head);
  return match === null ? undefined : `${shortPath(match[1] ?? '')}:${match[2]}`;
}

/** An ES module's is only printed: `node --check` prints it (the failure path only). */
function checkLocation(path: string): string | undefined {
  const check = spawnSync(process.execPath, ['--check', path], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  const match = LOCATION.exec(check.stderr);
  return match === null ? undefined : `${shortPath(match[1] ?? '')}:${match[2]}`;
}

function shortPath(where: string): string {
  const path = where.startsWith('file:') ? fileURLToPath(where) : where;
  const short = relative(process.cwd(), path);
  return short === '' || short.startsWith('..') ? path : short;
}
