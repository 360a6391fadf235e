// One test bed for a whole `kubebus test` run: the servers, the CRD, the
// wrapped operator running in-process — each role apart, as a process of its
// own would run it, so the watcher's feed can be held while the reconciler
// runs on (lagging) and the status writer can crash alone (status-restart) —
// and the workload's steps applied to one object in a place of its own per
// run (its namespace, or its name when cluster-scoped).
import { partitionOf } from '@kubebus/shared/bus';
import { KubeClient, isNotFound, loadKubeConfig, objectPath } from '@kubebus/shared/kube';
import { Registry, restClientMetrics } from '@kubebus/shared/obs';
import { apiVersionOf, type Operator, type ResourceObject } from '@kubebus/shared/definition';
import { partitionsOf } from '../host/role-configs.js';
import type { RunningOperatorHandle } from '../testing-api.js';
import { startEnvironment, type InProcessEnvironment } from '../testing/environment.js';
import { markWorkloadsReady } from '../testing/workload-stand-in.js';
import { identifiersOf, observe, type ObservedState } from './observed-state.js';
import { PartitionHandOver } from './partition-handover.js';
import type { Fixture } from './fixtures.js';
import { inPlace, type Place } from './place.js';
import type { RecordingOperator, Seen } from './recording-operator.js';
import type { PerturbationOptions } from './report.js';
import { requeue } from './requeue.js';
import { StatusHold } from './status-hold.js';
import { BusTimeTravel, GONE } from './time-travel.js';
import type { Step } from './workload.js';

export type BedDriverOptions = Pick<PerturbationOptions, 'env' | 'standIn' | 'layout'>;

/** How long a restarted watcher may take to bring the bus up to the apiserver. */
const CAUGHT_UP_WITHIN_MS = 30_000;

export class BedDriver {
  /** the reconciler and the status writer */
  #running: RunningOperatorHandle | undefined;
  #watcher: RunningOperatorHandle | undefined;
  #writer: RunningOperatorHandle | undefined;
  /** the second instance a handover gives the object's partition to */
  #second: RunningOperatorHandle | undefined;
  #handOvers = 0;
  /** per place: the fixtures' uids and resourceVersions as applied (observed-state.ts names them) */
  readonly #fixtureIdentifiers = new Map<string, Map<string, string>>();
  /** where the status writer holds an intent (the status-restart schedule) */
  readonly statusHold = new StatusHold();

  private constructor(
    private readonly environment: InProcessEnvironment,
    private readonly client: KubeClient,
    private readonly recording: RecordingOperator,
    private readonly options: BedDriverOptions,
    private readonly travel: BusTimeTravel,
    private readonly leases: PartitionHandOver,
  ) {}

  static async start(recording: RecordingOperator, options: BedDriverOptions): Promise<BedDriver> {
    // the garbage collector (kube-controller-manager) removes what an owner leaves
    const environment = await startEnvironment({ cluster: 'local', controllerManager: true });
    let travel: BusTimeTravel | undefined;
    let leases: PartitionHandOver | undefined;
    try {
      const credentials = await loadKubeConfig(environment.kubeconfigPath, {});
      const client = new KubeClient(credentials, restClientMetrics(new Registry()));
      await environment.install(recording.definition.for);
      travel = await BusTimeTravel.connect(environment.natsEnv);
      leases = await PartitionHandOver.connect(environment.natsEnv);
      const driver = new BedDriver(environment, client, recording, options, travel, leases);
      await driver.startOperator();
      return driver;
    } catch (error) {
      await travel?.close();
      await leases?.close();
      await environment.stop();
      throw error;
    }
  }

  get operator(): Operator {
    return this.recording.definition;
  }

  /** Layout one: the status writer runs in the reconciler's process (kubebus run), not on its own. */
  get #writerApart(): boolean {
    return this.options.layout !== 'one';
  }

  /** The reconciler's roles: with the status writer beside it in layout one. */
  get #reconcilerRoles(): ('reconciler' | 'status-writer')[] {
    return this.#writerApart ? ['reconciler'] : ['reconciler', 'status-writer'];
  }

  /** The roles, the watcher last (as one process starts them: no work before anyone takes it). */
  async startOperator(): Promise<void> {
    await this.#startWriter();
    if (this.#running === undefined)
      this.#running = await this.environment.run(this.recording.incarnation(), {
        logLevel: 'silent',
        // the incarnation before this one is stopped: a call it claimed is not under way
        // (a handover's second instance keeps the default: its zombie may still be calling)
        env: { KUBEBUS_ONCE_CLAIM_TIMEOUT: '1s', ...this.options.env },
        roles: this.#reconcilerRoles,
      });
    await this.releaseWatcher();
  }

  /** Status intents stored in KUBEBUS_STATUS so far. */
  statusIntentsOnBus(): Promise<number> {
    return this.travel.statusIntentsStored();
  }

  /**
   * After an unobserved window: the watcher first, and the reconciler only
   * once the bus records the object as the apiserver holds it, so the
   * window's changes reach it as one, as after a relist. Started the usual
   * way (startOperator), the reconciler may take the watcher's first
   * replayed change before the next is published: a middle state seen.
   */
  async startOperatorCaughtUp(place: Place): Promise<void> {
    await this.#startWriter();
    await this.releaseWatcher();
    // not in time: the reconciler starts anyway; what it sees is still judged
    await this.recordedOnBus(place);
    await this.startOperator();
  }

  /** The watcher first (no new work), the reconciler (no new intents), then the status writer. */
  async stopOperator(): Promise<void> {
    await this.holdWatcher();
    const running = this.#running;
    this.#running = undefined;
    await running?.stop();
    await this.#stopWriter();
  }

  /**
   * After the status writer held an intent (statusHold): that writer stopped,
   * the intent back on the bus unwritten, and a new writer started `downMs`
   * after the hold — the reconciler runs on meanwhile.
   */
  async restartStatusWriter(heldAt: number, downMs: number): Promise<void> {
    await this.#stopWriter();
    const left = heldAt + downMs - performance.now();
    if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
    await this.#startWriter();
  }

  async #startWriter(): Promise<void> {
    if (this.#writer !== undefined || !this.#writerApart) return;
    this.#writer = await this.environment.run(this.recording.definition, {
      logLevel: 'silent',
      env: this.options.env ?? {},
      roles: ['status-writer'],
      statusIntentTaken: this.statusHold.incarnation(),
    });
  }

  async #stopWriter(): Promise<void> {
    const writer = this.#writer;
    this.#writer = undefined;
    this.statusHold.abandon();
    await writer?.stop();
  }

  /**
   * The watcher's feed held: the watcher stopped, its cursor kept, so what
   * changes now reaches the bus only when it is released — the bus stays
   * behind the apiserver while the reconciler runs on.
   */
  async holdWatcher(): Promise<void> {
    const watcher = this.#watcher;
    this.#watcher = undefined;
    await watcher?.stop();
  }

  /** The watcher started again: it resumes from its cursor and publishes what it held back. */
  async releaseWatcher(): Promise<void> {
    if (this.#watcher !== undefined) return;
    this.#watcher = await this.environment.run(this.operator, {
      logLevel: 'silent',
      env: this.options.env ?? {},
      roles: ['watcher'],
    });
  }

  /** A requeue of the place's object, as a requeue-after or a retry makes one; answers whether it is handled yet. */
  requeue(place: Place): Promise<() => Promise<boolean>> {
    return requeue(this.travel.connection, this.operator, this.#keyOf(place));
  }

  /**
   * Takes the bus' record of the place's object back to what it was at `to`
   * (busNow), while the watcher is held (else it would bring it back at
   * once); answers how many revisions that took out.
   */
  travelBackPrimary(place: Place, to: number): Promise<number> {
    return this.travel.travelBack(this.#keyOf(place), to, undefined);
  }

  /** The place's object as the apiserver holds it now, if it exists. */
  #current(place: Place) {
    return this.environment.get(
      this.operator.for,
      place.name,
      place.namespaced ? place.namespace : undefined,
    );
  }

  #keyOf(place: Place) {
    const primary = this.operator.for;
    return {
      group: primary.group,
      resource: primary.plural,
      namespace: place.namespaced ? place.namespace : '',
      name: place.name,
    };
  }

  /** Whether the bus records the place's object as the apiserver holds it now (within a bound). */
  async recordedOnBus(place: Place): Promise<boolean> {
    const current = await this.#current(place);
    return this.travel.recorded(
      this.#keyOf(place),
      current?.metadata.resourceVersion ?? GONE,
      CAUGHT_UP_WITHIN_MS,
    );
  }

  /** After a crash: the dead incarnation's roles stopped (its work went back to the bus), a new one started. */
  async crash(): Promise<void> {
    this.recording.abandon();
    await this.stopOperator();
    await this.startOperator();
  }

  /**
   * The handover: a second instance of the operator's reconciler joins and is
   * handed the object's work partition, taken from the first (while the
   * object's reconcile is paused in it). Answers why not, when it went elsewhere.
   */
  async handOver(place: Place): Promise<true | string> {
    const replicaId = `test-${this.operator.name}-${++this.#handOvers}`;
    this.#second = await this.environment.run(this.recording.incarnation(), {
      logLevel: 'silent',
      // below its share of partitions, it is the one that takes the freed one; a round every 500 ms takes it soon
      env: { ...this.options.env, KUBEBUS_LEASE_RENEW: '500ms' },
      roles: this.#reconcilerRoles,
      replicaId,
    });
    const key = {
      group: this.operator.for.group,
      resource: this.operator.for.plural,
      namespace: place.namespace,
      name: place.name,
    };
    const partition = partitionOf(key, partitionsOf(this.operator));
    return this.leases.move(this.operator.name, partition, replicaId);
  }

  /** After a handover: both instances stopped, the operator started again as before. */
  async endHandOver(): Promise<void> {
    const second = this.#second;
    this.#second = undefined;
    await second?.stop();
    await this.stopOperator();
    await this.startOperator();
  }

  /**
   * Makes the run's namespace (a cluster-scoped object's run has none), then
   * the fixtures: in that namespace, or, for a cluster-scoped object, where
   * they say (the same objects for every run, unless named with `<name>`).
   */
  async prepare(place: Place, fixtures: readonly Fixture[]): Promise<void> {
    if (place.namespaced)
      await this.environment.apply({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: place.namespace },
      });
    for (const fixture of fixtures) await this.#applyFixture(place, fixture);
  }

  async #applyFixture(place: Place, written: Fixture): Promise<void> {
    // `<name>` and `<namespace>` in it: this run's own, as in the specs
    const fixture = inPlace(place, written) as Fixture;
    const applied = await this.environment.apply({
      ...fixture,
      metadata: {
        ...fixture.metadata,
        ...(place.namespaced ? { namespace: place.namespace } : {}),
      },
    });
    const identifiers = this.#fixtureIdentifiers.get(place.key) ?? new Map<string, string>();
    // its revisions in the order applied: each resourceVersion named for its own
    const revision = [...identifiers.values()].filter((name) =>
      name.startsWith(`<resourceVersion of ${fixture.kind}/${fixture.metadata.name} `),
    ).length;
    for (const [value, name] of identifiersOf(fixture.kind, applied, revision + 1))
      identifiers.set(value, name);
    this.#fixtureIdentifiers.set(place.key, identifiers);
  }

  /**
   * What a reconcile of a step not yet applied will see (to arm a crash on
   * before applying it, so a reconcile that starts at once is armed too).
   */
  async seenAfter(place: Place, step: Step): Promise<(seen: Seen) => boolean> {
    const current = await this.#current(place);
    const uid = current?.metadata.uid;
    if (step.action === 'delete') return (seen) => seen.uid === uid && seen.deleting;
    if (step.action === 'fixture') {
      // the object is not changed: the first of its reconciles from now on
      const from = performance.now();
      return (seen) => seen.uid === uid && !seen.deleting && seen.startedAt >= from;
    }
    const generation = current?.metadata.generation ?? 0;
    // a new object, or a new generation of this one
    return (seen) => !seen.deleting && (seen.uid !== uid || seen.generation > generation);
  }

  async apply(place: Place, step: Step): Promise<void> {
    const primary = this.operator.for;
    const namespace = place.namespaced ? place.namespace : undefined;
    if (step.action === 'delete') {
      await this.environment.delete(primary, place.name, namespace);
      return;
    }
    if (step.action === 'fixture') {
      await this.#applyFixture(place, step.fixture);
      return;
    }
    await this.environment.apply({
      apiVersion: apiVersionOf(primary),
      kind: primary.kind,
      metadata: { name: place.name, ...(namespace === undefined ? {} : { namespace }) },
      // `<name>` and `<namespace>` in a sample's spec: this run's own
      spec: inPlace(place, step.spec),
    });
  }

  /** Whether the object is gone (a finalizer may hold it while the operator is stopped). */
  async gone(place: Place): Promise<boolean> {
    try {
      const path = objectPath(
        {
          group: this.operator.for.group,
          version: this.operator.for.version,
          resource: this.operator.for.plural,
          namespaced: place.namespaced,
        },
        place.namespace,
        place.name,
      );
      return (await this.client.getIfExists<ResourceObject>(path)) === undefined;
    } catch (error) {
      if (isNotFound(error)) return true;
      throw error;
    }
  }

  async observe(place: Place): Promise<ObservedState> {
    // one pass before each look, so both runs see workloads the same way
    if (this.options.standIn !== false) await markWorkloadsReady(this.client);
    const state = await observe(
      this.client,
      this.operator,
      place,
      this.#fixtureIdentifiers.get(place.key),
    );
    return { ...state, effects: this.recording.effectsOf(place.key) };
  }

  /** Now, on the bus: where a stale schedule travels back to. */
  busNow(): Promise<number> {
    return this.travel.now();
  }

  /**
   * Takes the bus' record of an owned object (`Kind/name`, or `Kind/namespace/name`
   * beside a cluster-scoped object, in the reference's names) back to what it
   * was at `to` (busNow); answers how many revisions that took out, or why it cannot.
   */
  async travelBack(place: Place, target: string, to: number): Promise<number | string> {
    const parts = place.specific(target).split('/');
    const [kind = '', ...rest] = parts;
    const name = rest.at(-1) ?? '';
    const namespace = rest.length === 2 ? (rest[0] ?? '') : place.namespace;
    const resource = (this.operator.owns ?? []).find((owned) => owned.kind === kind);
    if (resource === undefined) return `${kind} is not a kind the operator owns`;
    const ref = {
      group: resource.group,
      version: resource.version,
      resource: resource.plural,
      namespaced: resource.scope === 'Namespaced',
    };
    const current = await this.client.getIfExists<ResourceObject>(
      objectPath(ref, ref.namespaced ? namespace : '', name),
    );
    return this.travel.travelBack(
      {
        group: resource.group,
        resource: resource.plural,
        namespace: ref.namespaced ? namespace : '',
        name,
      },
      to,
      current?.metadata.resourceVersion,
    );
  }

  async stop(): Promise<void> {
    this.#running = undefined;
    this.#watcher = undefined;
    this.#writer = undefined;
    this.#second = undefined;
    await this.travel.close();
    await this.leases.close();
    this.client.close();
    await this.environment.stop();
  }
}
