// `npm test` runs this after fetch-servers.ts: it finds, downloads or builds
// the tools the deployment tests check with and the CRD files they check
// against (tools.ts says in which order), and says where each came from. A
// failure is one line, exit 1. `fetch-tools.ts tools` or `fetch-tools.ts crds`
// does one half alone: a test that needs a tool, or the CRD files, is not
// failed by the other half.
import { resolveCrds } from './tool-crds.js';
import { resolveToolBinaries } from './tools.js';

const only = process.argv[2];
const say = (line: string) => process.stderr.write(`kubebus: ${line}\n`);
try {
  if (only !== undefined && only !== 'tools' && only !== 'crds')
    throw new Error(`usage: fetch-tools.ts [tools|crds], not ${only}`);
  const tools =
    only === 'crds'
      ? new Map<string, string>()
      : await resolveToolBinaries(process.env, { note: say });
  const crds =
    only === 'tools' ? new Map<string, readonly string[]>() : await resolveCrds(process.env, say);
  // said once everything is found: a failure is the one line
  for (const [name, path] of tools) say(`${name} ${path}`);
  for (const [set, files] of crds) say(`${set} CRDs ${files.length} files`);
} catch (error) {
  say((error as Error).message.split('\n')[0] ?? '');
  process.exit(1);
}
