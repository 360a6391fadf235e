// kubebus storage check <operator>: whether the release's conversions and
// schemas take every object the cluster stores, before its CRD is applied
// (host/stored-objects-check.ts).
import { publicText } from '@kubebus/shared/errors';
import { ExitCodes, type Exit, type Host } from './command-spec.js';
import type { CommandLine } from './commands.js';
import { withStorageSession } from './storage-session.js';

/** problems printed; the rest are counted */
const SHOWN = 50;

export async function checkStorageCommand(line: CommandLine, host: Host): Promise<Exit> {
  const { checkStoredObjects } = await import('../host/stored-objects-check.js');
  return withStorageSession(line, host, 'check', async (kube, resource) => {
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
  });
}
