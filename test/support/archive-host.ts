// A loopback HTTP host that serves what an upstream release host (or a module
// proxy) serves, in its layout: each path a file on disk or some text; what
// is not routed is a 404. The download tests of the servers and of the test
// tools point kubebus at it.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  createReadStream,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** What the host serves: a path (as requested, percent-escapes kept) → a file or some text. */
export type Routes = Map<string, { file: string } | { text: string }>;

export interface ArchiveHost {
  readonly url: string;
  readonly routes: Routes;
  /** requests seen, by path */
  readonly requests: string[];
  /** the Authorization header of each request seen, if it had one */
  readonly authorizations: string[];
  /** while set, a file is sent only once two requests for it have come: two downloads overlap */
  pairUp: boolean;
  close(): Promise<void>;
}

export async function startArchiveHost(routes: Routes): Promise<ArchiveHost> {
  const requests: string[] = [];
  const authorizations: string[] = [];
  const held = new Map<string, (() => void)[]>();
  let pairUp = false;
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    requests.push(path);
    if (request.headers.authorization !== undefined)
      authorizations.push(request.headers.authorization);
    const route = routes.get(path);
    if (route === undefined) {
      response.writeHead(404).end('not found');
    } else if ('text' in route) {
      response.writeHead(200, { 'content-type': 'text/plain' }).end(route.text);
    } else {
      const send = () => {
        response.writeHead(200, { 'content-type': 'application/octet-stream' });
        createReadStream(route.file).pipe(response);
      };
      if (!pairUp) return send();
      const waiting = [...(held.get(path) ?? []), send];
      held.set(path, waiting);
      if (waiting.length < 2) return;
      held.delete(path);
      for (const waiter of waiting) waiter();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    routes,
    requests,
    authorizations,
    get pairUp() {
      return pairUp;
    },
    set pairUp(value: boolean) {
      pairUp = value;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export const digestOf = (algorithm: 'sha256' | 'sha512', path: string) =>
  createHash(algorithm).update(readFileSync(path)).digest('hex');

/** A .tar.gz of `files` (path in the archive → file on disk), made by tar as upstream's are. */
export function tarball(out: string, files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'kubebus-tree-'));
  for (const [inside, source] of Object.entries(files)) {
    mkdirSync(dirname(join(root, inside)), { recursive: true });
    symlinkSync(source, join(root, inside));
  }
  // -h stores the files the links point at; gzip -1 keeps the machine's load low
  execFileSync('tar', ['-I', 'gzip -1', '-chf', out, '-C', root, ...Object.keys(files)]);
  rmSync(root, { recursive: true, force: true });
  return out;
}
