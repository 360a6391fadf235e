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
    const read = Object.entries(report.checked)
      .map(([version, count]) => `${count} read as ${version}`)
      .join(', ');
    const versions = resource.versions.map((version) => version.name).join(', ');
    for (const problem of report.problems.slice(0, SHOWN))
      host.stdout.write(`${publicText(problem)}\n`);
    if (report.problems.length > SHOWN)
      host.stdout.write(`… and ${report.problems.length - SHOWN} more\n`);
    if (report.problems.length > 0) {
      host.stdout.write(
        `${crd}: ${report.problems.length} problems (objects ${read || 'none'}): fix the release's conversions or schemas before its CRD is applied\n`,
      );
      return ExitCodes.problem;
    }
    host.stdout.write(
      `${crd}: stored in ${report.storedVersions.join(', ') || 'nothing'}; objects ${read || 'none'}: each passes this release's schema and converts to every version (${versions}) and back\n`,
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
