// `npm start` and `npm test` run this first: it finds, downloads or builds the
// four servers (binaries.ts says in which order) before any test's timeout
// runs, and says where each one came from. A failure is one line, exit 1.
import { resolveServers, SERVER_BINARIES } from './binaries.js';

try {
  const found = await resolveServers(SERVER_BINARIES);
  for (const [name, path] of found) process.stderr.write(`kubebus: ${name} ${path}\n`);
} catch (error) {
  process.stderr.write(`kubebus: ${(error as Error).message.split('\n')[0] ?? ''}\n`);
  process.exit(1);
}
