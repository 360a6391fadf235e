// What the `kubebus storage` commands share: the operator's resource, an
// apiserver client, and a refusal (MigrationRefused) said in one line with
// status 1.
import type { CustomResource } from '@kubebus/shared/definition';
import { KubeClient } from '@kubebus/shared/kube';
import { Registry, restClientMetrics } from '@kubebus/shared/obs';
import { kubeConfigOf } from './bus-session.js';
import { cliEnv } from './cli-env.js';
import { ExitCodes, type Exit, type Host } from './command-spec.js';
import { operatorArgument, type CommandLine } from './commands.js';

export async function withStorageSession(
  line: CommandLine,
  host: Host,
  command: 'migrate' | 'check',
  run: (kube: KubeClient, resource: CustomResource) => Promise<Exit>,
): Promise<Exit> {
  const env = cliEnv(host.env);
  const operator = await operatorArgument(line, `kubebus storage ${command} <operator.ts|.js>`);
  const kube = new KubeClient(await kubeConfigOf(env, host), restClientMetrics(new Registry()));
  const { MigrationRefused } = await import('../host/storage-migration.js');
  try {
    return await run(kube, operator.for);
  } catch (error) {
    if (!(error instanceof MigrationRefused)) throw error;
    host.stderr.write(`kubebus storage ${command}: ${error.message}\n`);
    return ExitCodes.problem;
  } finally {
    kube.close();
  }
}
