// Creating and checking an operator's durable consumers (durable-consumers.ts),
// as topology-apply.ts does for streams: the topology step (`kubebus topology
// apply <operator>`, as the NATS admin) creates what is missing and updates
// what differs; a service only gets them — where its user may (the test bed,
// `kubebus dev`) it creates them too, in production it waits for the
// topology step with one line saying to run it.
import { JetStreamApiCodes, JetStreamApiError, type JetStreamManager } from '@nats-io/jetstream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../obs/mod.js';
import { backoffDelay } from '../runtime/backoff.js';
import {
  consumerConfigOf,
  differingConsumerFields,
  type DurableConsumerSpec,
} from './durable-consumers.js';
import { applyTopologyObject, type TopologyChange, type TopologyMode } from './topology-apply.js';

function isNotFound(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    (error.code === JetStreamApiCodes.ConsumerNotFound ||
      error.code === JetStreamApiCodes.StreamNotFound)
  );
}

/** One consumer: `stream` in the change names it `<stream>/<durable>`. */
export async function applyConsumer(
  jsm: JetStreamManager,
  spec: DurableConsumerSpec,
  mode: TopologyMode,
): Promise<TopologyChange> {
  return applyTopologyObject(
    {
      name: `${spec.stream}/${spec.durable}`,
      read: async () => (await jsm.consumers.info(spec.stream, spec.durable)).config,
      isMissing: isNotFound,
      differing: (found) => differingConsumerFields(spec, found),
      update: () => jsm.consumers.update(spec.stream, spec.durable, consumerConfigOf(spec)),
      create: () => jsm.consumers.add(spec.stream, consumerConfigOf(spec)),
    },
    mode,
  );
}

export async function applyConsumers(
  jsm: JetStreamManager,
  specs: readonly DurableConsumerSpec[],
  mode: TopologyMode,
): Promise<TopologyChange[]> {
  const changes: TopologyChange[] = [];
  for (const spec of specs) changes.push(await applyConsumer(jsm, spec, mode));
  return changes;
}

/**
 * A service's consumers, once they exist: created here where the user may,
 * else waited for, saying once per attempt what to run.
 */
export async function openConsumers(
  jsm: JetStreamManager,
  specs: readonly DurableConsumerSpec[],
  log: Logger,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const changes = await applyConsumers(jsm, specs, 'where-allowed');
    const differs = changes.filter(({ result }) => result === 'differs');
    if (differs.length > 0)
      log.warn(
        { consumers: differs.map(({ stream, fields }) => ({ consumer: stream, fields })) },
        `${differs.length} consumers differ from this process's settings; run \`kubebus topology apply <operator>\` as the NATS admin user with the same settings`,
      );
    const missing = changes.filter(({ result }) => result === 'missing').map((c) => c.stream);
    if (missing.length === 0) return;
    log.warn(
      { missing, attempt },
      `waiting for the consumers ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ` and ${missing.length - 3} more` : ''}: this NATS user may not create them; run \`kubebus topology apply <operator>\` (the topology Job) as the NATS admin user`,
    );
    await sleep(backoffDelay({ baseMs: 1_000, capMs: 15_000 }, attempt));
  }
}
