// Each role's configuration: the environment (the variables every kubebus
// service reads) plus what the operator definition decides — controller
// name, partitions, interests, field manager — so no two processes can be
// told different things by hand.
import { loadConfig, type Environment } from '@kubebus/shared/config';
import { ReconcilerConfigSchema, type ReconcilerConfig } from '@kubebus/reconciler/service';
import { StatusWriterConfigSchema, type StatusWriterConfig } from '@kubebus/status-writer/service';
import {
  WatcherConfigSchema,
  type ControllerSpec,
  type WatchMapping,
  type WatcherConfig,
} from '@kubebus/watcher/service';
import {
  DEFAULT_PARTITIONS,
  resourceName,
  type CustomResource,
  type Operator,
  type Watch,
} from '@kubebus/shared/definition';

export const ROLES = ['watcher', 'reconciler', 'status-writer'] as const;
export type Role = (typeof ROLES)[number];

/** Variables the definition decides: setting them has no effect, so it is refused. */
const DERIVED = ['KUBEBUS_CONTROLLERS', 'KUBEBUS_CONTROLLER', 'KUBEBUS_WORK_PARTITIONS'];

export function derivedVariablesSet(env: Environment): string[] {
  return DERIVED.filter((name) => env[name] !== undefined);
}

export function partitionsOf(operator: Operator): number {
  return operator.partitions ?? DEFAULT_PARTITIONS;
}

export function watcherConfig(operator: Operator, env: Environment): WatcherConfig {
  const settings = loadConfig(WatcherConfigSchema, { KUBEBUS_WATCHER_ID: operator.name, ...env });
  const controller: ControllerSpec = {
    name: operator.name,
    for: resourceName(operator.for),
    owns: (operator.owns ?? []).map(resourceName),
    watches: (operator.watches ?? []).map((watch) => watchMappingOf(operator, watch)),
  };
  return {
    ...settings,
    operator: operator.name,
    controllers: [controller],
    partitions: partitionsOf(operator),
  };
}

/** A watch as the watcher runs it: `references` gets the primary with its spec parsed. */
function watchMappingOf(operator: Operator, watch: Watch<CustomResource>): WatchMapping {
  const resource = resourceName(watch.resource);
  if (watch.map !== undefined) {
    const mapped = watch;
    return { resource, map: (object) => mapped.map(object) };
  }
  const spec = operator.for.definition.spec;
  return {
    resource,
    references: (primary) => {
      const parsed = spec.safeParse(primary['spec'] ?? {});
      // an invalid spec is reported on the object; it refers to nothing meanwhile
      if (!parsed.success) return [];
      return watch.references({ ...primary, spec: parsed.data });
    },
  };
}

export function reconcilerConfig(
  operator: Operator,
  env: Environment,
  replicaId: string,
): ReconcilerConfig {
  const settings = loadConfig(ReconcilerConfigSchema, {
    KUBEBUS_REPLICA_ID: replicaId,
    KUBEBUS_FIELD_MANAGER: `kubebus-${operator.name}`,
    ...(operator.maxAttempts === undefined
      ? {}
      : { KUBEBUS_MAX_ATTEMPTS: String(operator.maxAttempts) }),
    ...(operator.maxCrashes === undefined
      ? {}
      : { KUBEBUS_MAX_CRASHES: String(operator.maxCrashes) }),
    ...env,
  });
  return { ...settings, controller: operator.name, partitions: partitionsOf(operator) };
}

export function statusWriterConfig(
  operator: Operator,
  env: Environment,
  replicaId: string,
): StatusWriterConfig {
  const settings = loadConfig(StatusWriterConfigSchema, { KUBEBUS_REPLICA_ID: replicaId, ...env });
  return {
    ...settings,
    controller: operator.name,
    primary: { group: operator.for.group, resource: operator.for.plural },
  };
}
