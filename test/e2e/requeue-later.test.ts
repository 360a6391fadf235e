// Requeues hold no delivery (ADR 0034): objects that ask to be reconciled
// again in an hour leave their partition free for every other change, and a
// requeue comes back when due with nothing changed on the object. Before,
// each waited in its partition's delivery slots (max_ack_pending), and a
// dozen of them stopped the partition.
import { defineOperator, defineResource } from 'kubebus';
import {
  connectionOf,
  dlqRedriveCommand,
  readDeadLettersOf,
  readStatus,
} from '@kubebus/cli/commands';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startTestEnvironment, type TestEnvironment } from 'kubebus/testing';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { waitFor } from '../support/wait.js';

const Lease = defineResource({
  group: 'test.kubebus.dev',
  version: 'v1',
  kind: 'RenewedLease',
  scope: 'Namespaced',
  spec: z.object({ renewAfterMs: z.int().min(1) }),
  status: z.object({ checked: z.boolean() }).partial(),
});

/** Reconciles of each object, counted here: the operator runs in this process. */
const reconciles = new Map<string, number>();

const renewals = defineOperator({
  name: 'renewals',
  for: Lease,
  // one partition: its few delivery slots are what the waiting requeues used to hold
  partitions: 1,
  reconcile: async (lease) => {
    const name = lease.metadata.name;
    reconciles.set(name, (reconciles.get(name) ?? 0) + 1);
    return { status: { checked: true }, requeueAfterMs: lease.spec.renewAfterMs };
  },
});

const flakyAttempts = new Map<string, number>();
/** objects whose external service works again */
const healed = new Set<string>();

/** A resource whose operator fails until its object is healed, reconciles counted here. */
function failingUntilHealed(kind: string, name: string) {
  const resource = defineResource({
    group: 'test.kubebus.dev',
    version: 'v1',
    kind,
    scope: 'Namespaced',
    spec: z.object({}),
    status: z.object({}).partial(),
  });
  const operator = defineOperator({
    name,
    for: resource,
    partitions: 1,
    reconcile: async (object) => {
      const objectName = object.metadata.name;
      flakyAttempts.set(objectName, (flakyAttempts.get(objectName) ?? 0) + 1);
      if (healed.has(objectName)) return undefined;
      throw new Error('the external service refused it');
    },
  });
  return { resource, operator };
}

/** Always failing: its retries wait apart too, their attempts carried with them. */
const { resource: Flaky, operator: failing } = failingUntilHealed('FlakyLease', 'failing');
/** Fails until healed, its retries 20–30 s away: a change reconciles it well before. */
const { resource: Mendable, operator: mending } = failingUntilHealed('MendableLease', 'mending');

const HOUR = 3_600_000;
/** well above the partition's slots: a worker's share plus one, for any worker count kubebus defaults to */
const WAITING = 40;

describe('requeues wait without their delivery', { timeout: 300_000 }, () => {
  let env: TestEnvironment;

  before(async () => {
    env = await startTestEnvironment();
    await env.install(Lease);
    await env.install(Flaky);
    await env.install(Mendable);
    await env.run(renewals);
    // backoffs of 1–2 s: some retries wait apart, some (full jitter) in their delivery
    await env.run(failing, {
      env: { KUBEBUS_MAX_ATTEMPTS: '3', KUBEBUS_BACKOFF_BASE: '1s', KUBEBUS_BACKOFF_CAP: '2s' },
    });
    await env.run(mending, {
      env: { KUBEBUS_BACKOFF_BASE: '20s', KUBEBUS_BACKOFF_CAP: '30s' },
    });
  });
  after(() => env?.stop());

  const lease = (name: string, renewAfterMs: number) =>
    env.apply({
      apiVersion: 'test.kubebus.dev/v1',
      kind: 'RenewedLease',
      metadata: { name },
      spec: { renewAfterMs },
    });

  /** `use` with a NATS connection of the bed's, closed after */
  const withBus = async <T>(use: (nc: NatsConnection) => Promise<T>): Promise<T> => {
    const nc = await connect(connectionOf({}, env.natsEnv).options);
    try {
      return await use(nc);
    } finally {
      await nc.close();
    }
  };
  const keyOf = (resource: string, name: string) => ({
    group: 'test.kubebus.dev',
    resource,
    namespace: 'default',
    name,
  });

  const consumer = (durable: string) =>
    withBus(async (nc) => (await jetstreamManager(nc)).consumers.info('KUBEBUS_WORK', durable));

  it('reconciles every object and a new one behind them while they wait an hour', async () => {
    for (let i = 0; i < WAITING; i++) await lease(`hourly-${String(i)}`, HOUR);
    for (let i = 0; i < WAITING; i++)
      await env.waitFor(Lease, `hourly-${String(i)}`, (l) => l?.status?.checked === true);
    // a change behind them all: the partition is free
    await lease('newcomer', HOUR);
    await env.waitFor(Lease, 'newcomer', (l) => l?.status?.checked === true);
    // the hour is waited on the later consumer, none of it in the partition's
    await waitFor(
      async () => (await consumer('renewals_p0')).num_ack_pending === 0,
      "the partition's deliveries all answered",
    );
    // `kubebus status` says when the newcomer's requeue is due
    await withBus(async (nc) => {
      const { work } = await readStatus(nc, undefined, keyOf('renewedleases', 'newcomer'));
      const due = work.find((place) => place.controller === 'renewals')?.requeueDue;
      assert.ok(
        due !== undefined && Date.parse(due) > Date.now() + HOUR / 2,
        `a requeue due in about an hour: ${String(due)}`,
      );
    });
    const later = await consumer('renewals_later');
    assert.ok(
      later.num_ack_pending + later.num_pending >= WAITING + 1,
      `every object's requeue waits on renewals_later: ${String(later.num_ack_pending)} held, ${String(later.num_pending)} not yet pulled`,
    );
  });

  it('reconciles an object again when its requeue is due, with nothing changed on it', async () => {
    await lease('often', 1_500);
    await waitFor(
      async () => (reconciles.get('often') ?? 0) >= 4,
      'three requeues of `often` beside the waiting ones',
      60_000,
    );
    // the hourly ones were not reconciled again meanwhile (each once, or twice: its status' echo)
    for (let i = 0; i < WAITING; i++)
      assert.ok((reconciles.get(`hourly-${String(i)}`) ?? 0) <= 2, `hourly-${String(i)}`);
  });

  it('dead-letters a failing object once its budget is spent, its attempts carried across waits', async () => {
    await env.apply({
      apiVersion: 'test.kubebus.dev/v1',
      kind: 'FlakyLease',
      metadata: { name: 'refused' },
      spec: {},
    });
    const key = keyOf('flakyleases', 'refused');
    await withBus(async (nc) => {
      await waitFor(
        async () => (await readDeadLettersOf(nc, key)).length > 0,
        'refused to be dead-lettered after 3 attempts',
        60_000,
      );
      const [letter] = await readDeadLettersOf(nc, key);
      assert.equal(letter?.attempts, 3);
      assert.equal(flakyAttempts.get('refused'), 3, 'three reconciles, no more');
      // re-driven, still failing: a whole budget again, its retries waiting apart still a re-drive
      const quiet = { write: () => true };
      await dlqRedriveCommand(
        { all: { origin: 'failing' } },
        { nc, stdout: quiet, stderr: quiet, format: 'table' },
      );
      await waitFor(
        async () => (await readDeadLettersOf(nc, key)).length > 0,
        'refused to be dead-lettered again after 3 more attempts',
        60_000,
      );
      assert.equal(flakyAttempts.get('refused'), 6, 'three reconciles more');
    });
  });

  it('drops a waiting retry once a change of the object reconciles it', async () => {
    const mendable = (generation: number) =>
      env.apply({
        apiVersion: 'test.kubebus.dev/v1',
        kind: 'MendableLease',
        metadata: { name: 'mended', labels: { try: String(generation) } },
        spec: {},
      });
    const key = keyOf('mendableleases', 'mended');
    await withBus(async (nc) => {
      const due = async () =>
        (await readStatus(nc, undefined, key)).work.find((place) => place.controller === 'mending')
          ?.requeueDue;
      await mendable(1);
      await waitFor(async () => (await due()) !== undefined, 'a retry of mended waiting apart');
      // fixed, and a change reconciles it long before its retry is due (20 s or more): the
      // waiting mark gone within 15 s is the cancellation's doing
      healed.add('mended');
      await mendable(2);
      await waitFor(
        async () => (await due()) === undefined,
        'the waiting retry replaced by a cancelled one',
        15_000,
      );
      // the failure, the change, and the reconcile its Ready status' echo brings
      assert.ok((flakyAttempts.get('mended') ?? 0) <= 3, 'no reconcile of a cancelled retry');
    });
  });
});
