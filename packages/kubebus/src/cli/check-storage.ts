// kubebus storage check <operator>: whether the release's conversions and
// schemas take every object the cluster stores, before its CRD is applied
// (host/stored-objects-check.ts).
import { KubeClient } from '@kubebus/shared/kube';
import { Registry, restClientMetrics } from '@kubebus/shared/obs';
import { kubeConfigOf } from './bus-session.js';
import { cliEnv } from './cli-env.js';
import type { Exit, Host } from './command-spec.js';
import { ExitCodes } from './command-spec.js';
import { operatorArgument, type CommandLine } from './commands.js';
import { publicText } from '@kubebus/shared/errors';

const USAGE = 'kubebus storage check <operator.ts|.js>';
/** problems printed; the rest are counted */
const SHOWN = 50;

export async function checkStorageCommand(line: CommandLine, host: Host): Promise<Exit> {
  const env = cliEnv(host.env);
  const operator = await operatorArgument(line, USAGE);
  const resource = operator.for;
  const kube = new KubeClient(await kubeConfigOf(env, host), restClientMetrics(new Registry()));
  const { checkStoredObjects } = await import('../host/stored-objects-check.js');
  const { MigrationRefused } = await import('../host/storage-migration.js');
  try {
    const report = await checkStoredObjects(kube, resource);
    const crd = `${resource.plural}.${resource.group}`;
    const read = `${report.objects} objects${report.listedIn.length === 0 ? '' : ` (listed as ${report.listedIn.join(' and ')})`}`;
    const versions = resource.versions.map((version) => version.name).join(', ');
    const print = (lines: readonly string[], prefix: string) => {
      for (const line of lines.slice(0, SHOWN)) host.stdout.write(`${prefix}${publicText(line)}\n`);
      if (lines.length > SHOWN) host.stdout.write(`${prefix}… and ${lines.length - SHOWN} more\n`);
    };
    print(report.warnings, 'warning: ');
    print(report.problems, '');
    if (report.problems.length > 0) {
      host.stdout.write(
        `${crd}: ${report.problems.length} problems in ${read}: fix the release's conversions before its CRD is applied\n`,
      );
      return ExitCodes.problem;
    }
    host.stdout.write(
      `${crd}: stored in ${report.storedVersions.join(', ') || 'nothing'}; ${read}: each converts to every version of this release (${versions}) and back${report.warnings.length === 0 ? '' : ` (${report.warnings.length} warnings above)`}\n`,
    );
    return ExitCodes.ok;
  } catch (error) {
    if (!(error instanceof MigrationRefused)) throw error;
    host.stderr.write(`kubebus storage check: ${error.message}\n`);
    return ExitCodes.problem;
  } finally {
    kube.close();
  }
}
