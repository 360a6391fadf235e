// What `kubebus generate --out <dir>` writes, by path under <dir>: the
// kustomize base (kustomize/), the Helm chart (helm/<operator>/), and the
// NATS configuration for a NATS the chart does not install (nats/), with the
// keys of the NATS credentials Secret to fill in.
import type { Operator } from '@kubebus/shared/definition';
import type { Role } from '../host/role-configs.js';
import { helmChartFiles } from './helm-chart.js';
import { kustomizeFiles } from './kustomize.js';
import { natsSecretExampleOf } from './nats-secret-example.js';
import { natsServerConfigOf } from './nats-server.js';
import { natsUsersOf } from './nats-users.js';
import { plainSettings } from './settings.js';

export const FORMATS = ['kustomize', 'helm', 'all'] as const;
export type Format = (typeof FORMATS)[number];

export interface PackageOptions {
  readonly namespace: string;
  readonly image: string;
  /** the operator module's path inside the image */
  readonly module: string;
  readonly watchNamespaces: readonly string[];
  readonly format: Format;
}

const under = (dir: string, files: Record<string, string>) =>
  Object.fromEntries(Object.entries(files).map(([path, text]) => [`${dir}/${path}`, text]));

export function packageFiles(
  operator: Operator,
  roles: readonly Role[],
  options: PackageOptions,
): Record<string, string> {
  const kustomize = options.format !== 'helm';
  const helm = options.format !== 'kustomize';
  return {
    ...(kustomize
      ? under('kustomize', kustomizeFiles(operator, roles, plainSettings(options)))
      : {}),
    ...(helm ? under(`helm/${operator.name}`, helmChartFiles(operator, roles, options)) : {}),
    'nats/nats-server.conf': natsServerConfigOf(operator, roles),
    'nats/nats-users.conf': natsUsersOf(operator, roles),
    'nats/nats-users.env.example': natsSecretExampleOf(operator, roles),
  };
}
