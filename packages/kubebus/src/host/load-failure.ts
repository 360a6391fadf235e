// Why an operator module did not load, in one line: the error's first line
// and where it is (file:line) — for a syntax error, which Node's ES module
// loader does not put in the error it throws, only in what it prints; for an
// error the module threw, its first frame in the user's own files — and what
// to do: install a package it imports that is missing, fix what it threw.
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
  const missing = missingPackage(error);
  if (missing !== undefined) return `${message}: npm install ${missing}`;
  // node's own refusals (a missing file, an unexported path) say what they are
  if (/^ERR_/.test(String((error as { code?: unknown }).code))) return message;
  if (!(error instanceof SyntaxError)) {
    const thrownAt = ownFrame(error);
    return thrownAt === undefined
      ? `${message}: the module threw while loading`
      : `${message} (${thrownAt}): the module threw while loading; fix it there`;
  }
  const where = stackLocation(error) ?? checkLocation(path);
  return where === undefined || message.includes(where) ? message : `${message} (${where})`;
}

/** The package a bare import names that is not installed (not a relative file that is missing). */
export function missingPackage(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return undefined;
  const named = /Cannot find (?:package|module) '([^']+)'/.exec(error.message)?.[1];
  if (named === undefined || /^(\.|\/|file:|node:)/.test(named)) return undefined;
  // @scope/name/sub → @scope/name; name/sub → name
  return named
    .split('/')
    .slice(0, named.startsWith('@') ? 2 : 1)
    .join('/');
}

/** The first stack frame in the user's files: not node's own, not a dependency's. */
function ownFrame(error: Error): string | undefined {
  for (const line of (error.stack ?? '').split('\n').slice(1)) {
    if (/\(node:|at node:/.test(line)) continue; // node's own
    const match = LOCATION.exec(line);
    if (match === null || /[\\/]node_modules[\\/]/.test(match[1] ?? '')) continue;
    return `${shortPath(match[1] ?? '')}:${match[2]}`;
  }
  return undefined;
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
