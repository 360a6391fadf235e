// kubebus storage migrate <operator>: every stored object of the operator's
// resource rewritten in its storage version, then the CRD's storedVersions
// trimmed to it (host/storage-migration.ts).
import { KubeClient } from '@kubebus/shared/kube';
import { Registry, restClientMetrics } from '@kubebus/shared/obs';
import { kubeConfigOf } from './bus-session.js';
import { cliEnv } from './cli-env.js';
import type { Exit, Host } from './command-spec.js';
import { ExitCodes } from './command-spec.js';
import { operatorArgument, type CommandLine } from './commands.js';

const USAGE = 'kubebus storage migrate <operator.ts|.js>';

export async function migrateStorageCommand(line: CommandLine, host: Host): Promise<Exit> {
  const env = cliEnv(host.env);
  const operator = await operatorArgument(line, USAGE);
  const resource = operator.for;
  const kube = new KubeClient(await kubeConfigOf(env, host), restClientMetrics(new Registry()));
  const { migrateStorage, MigrationRefused } = await import('../host/storage-migration.js');
  try {
    const report = await migrateStorage(kube, resource);
    host.stdout.write(
      `${resource.plural}.${resource.group}: ${report.rewritten} objects rewritten in ${resource.version}` +
        `${report.gone > 0 ? ` (${report.gone} deleted meanwhile)` : ''}; ` +
        `stored versions were ${report.storedBefore.join(', ') || 'none'}, now ${resource.version}\n`,
    );
    return ExitCodes.ok;
  } catch (error) {
    if (!(error instanceof MigrationRefused)) throw error;
    host.stderr.write(`kubebus storage migrate: ${error.message}\n`);
    return ExitCodes.problem;
  } finally {
    kube.close();
  }
}
