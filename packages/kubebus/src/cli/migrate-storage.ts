// kubebus storage migrate <operator>: every stored object of the operator's
// resource rewritten in its storage version, then the CRD's storedVersions
// trimmed to it (host/storage-migration.ts).
import { ExitCodes, type Exit, type Host } from './command-spec.js';
import type { CommandLine } from './commands.js';
import { withStorageSession } from './storage-session.js';

export async function migrateStorageCommand(line: CommandLine, host: Host): Promise<Exit> {
  const { migrateStorage } = await import('../host/storage-migration.js');
  return withStorageSession(line, host, 'migrate', async (kube, resource) => {
    const report = await migrateStorage(kube, resource);
    host.stdout.write(
      `${resource.plural}.${resource.group}: ${report.rewritten} objects rewritten in ${resource.version}` +
        `${report.gone > 0 ? ` (${report.gone} deleted meanwhile)` : ''}; ` +
        `stored versions were ${report.storedBefore.join(', ') || 'none'}, now ${resource.version}\n`,
    );
    return ExitCodes.ok;
  });
}
