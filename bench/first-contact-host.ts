// A loopback stand-in for the release hosts (controller-tools' envtest
// releases, nats-server's GitHub releases, dl.k8s.io) for
// bench/first-contact.sh: serves the files under a directory as they are laid
// out there, and prints its base URL on the first line of stdout. Plain
// TypeScript that Node >= 22.18 runs itself, so the bench needs no tsx.
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize } from 'node:path';

const root = process.argv[2];
if (root === undefined) {
  process.stderr.write('usage: node bench/first-contact-host.ts <directory>\n');
  process.exit(2);
}

const server = createServer((request, response) => {
  const path = normalize(decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname));
  const file = join(root, path);
  let size: number;
  try {
    const stat = statSync(file);
    if (!stat.isFile() || path.includes('..')) throw new Error('not a file');
    size = stat.size;
  } catch {
    response.writeHead(404).end('not found');
    return;
  }
  response.writeHead(200, {
    'content-type': 'application/octet-stream',
    'content-length': String(size),
  });
  createReadStream(file).pipe(response);
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
