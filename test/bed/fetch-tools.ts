// `npm test` runs this after fetch-servers.ts: it finds, downloads or builds
// the tools the deployment tests check with and the CRD files they check
// against (tools.ts says in which order), and says where each came from. A
// failure is one line, exit 1.
import { resolveTools } from './tools.js';

try {
  const { tools, crds } = await resolveTools();
  for (const [name, path] of tools) process.stderr.write(`kubebus: ${name} ${path}\n`);
  for (const [set, files] of crds)
    process.stderr.write(`kubebus: ${set} CRDs ${files.length} files\n`);
} catch (error) {
  process.stderr.write(`kubebus: ${(error as Error).message.split('\n')[0] ?? ''}\n`);
  process.exit(1);
}
