// One test bed for a whole `kubebus test` run: the servers, the CRD, the
// wrapped operator running in-process with all roles (stopped and started
// again for a crash), and the workload's steps applied to one object in a
// place of its own per run (its namespace, or its name when cluster-scoped).
// The watcher runs apart from the other roles, as a process of its own would,
// so its feed can be held while the reconciler runs on (the lagging schedule).
import { KubeClient, isNotFound, loadKubeConfig, objectPath } from '@kubebus/shared/kube';
import { Registry, restClientMetrics } from '@kubebus/shared/obs';
import { apiVersionOf, type Operator, type ResourceObject } from '@kubebus/shared/definition';
import type { RunningOperatorHandle, TestEnvironment } from '../testing-api.js';
import { startEnvironment } from '../testing/environment.js';
import { observe, type ObservedState } from './observed-state.js';
import type { Place } from './place.js';
import type { RecordingOperator, Seen } from './recording-operator.js';
import type { PerturbationOptions } from './report.js';
import { requeue } from './requeue.js';
import { BusTimeTravel } from './time-travel.js';
import type { Step } from './workload.js';

export type BedDriverOptions = Pick<PerturbationOptions, 'env' | 'standIn'>;

export class BedDriver {
  /** the reconciler and the status writer */
  #running: RunningOperatorHandle | undefined;
  #watcher: RunningOperatorHandle | undefined;

  private constructor(
    private readonly environment: TestEnvironment,
    private readonly client: KubeClient,
    private readonly recording: RecordingOperator,
    private readonly options: BedDriverOptions,
    private readonly travel: BusTimeTravel,
  ) {}

  static async start(recording: RecordingOperator, options: BedDriverOptions): Promise<BedDriver> {
    // the garbage collector (kube-controller-manager) removes what an owner leaves
    const environment = await startEnvironment({ cluster: 'local', controllerManager: true });
    let travel: BusTimeTravel | undefined;
    try {
      const credentials = await loadKubeConfig(environment.kubeconfigPath, {});
      const client = new KubeClient(credentials, restClientMetrics(new Registry()));
      await environment.install(recording.definition.for);
      travel = await BusTimeTravel.connect(environment.natsEnv);
      const driver = new BedDriver(environment, client, recording, options, travel);
      await driver.startOperator();
      return driver;
    } catch (error) {
      await travel?.close();
      await environment.stop();
      throw error;
    }
  }

  get operator(): Operator {
    return this.recording.definition;
  }

  /** The roles, the watcher last (as one process starts them: no work before anyone takes it). */
  async startOperator(): Promise<void> {
    if (this.#running === undefined)
      this.#running = await this.environment.run(this.recording.incarnation(), {
        logLevel: 'silent',
        env: this.options.env ?? {},
        roles: ['reconciler', 'status-writer'],
      });
    await this.releaseWatcher();
  }

  /** The watcher first (no new work), then the others. */
  async stopOperator(): Promise<void> {
    await this.holdWatcher();
    const running = this.#running;
    this.#running = undefined;
    await running?.stop();
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

  #keyOf(place: Place) {
    const primary = this.operator.for;
    return {
      group: primary.group,
      resource: primary.plural,
      namespace: place.namespaced ? place.namespace : '',
      name: place.name,
    };
  }

  /** After a crash: the dead incarnation's roles stopped (its work went back to the bus), a new one started. */
  async crash(): Promise<void> {
    this.recording.abandon();
    await this.stopOperator();
    await this.startOperator();
  }

  /** Makes the run's namespace (a cluster-scoped object's run has none). */
  async prepare(place: Place): Promise<void> {
    if (!place.namespaced) return;
    await this.environment.apply({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: place.namespace },
    });
  }

  /**
   * What a reconcile of a step not yet applied will see (to arm a crash on
   * before applying it, so a reconcile that starts at once is armed too).
   */
  async seenAfter(place: Place, step: Step): Promise<(seen: Seen) => boolean> {
    const current = await this.environment.get(
      this.operator.for,
      place.name,
      place.namespaced ? place.namespace : undefined,
    );
    const uid = current?.metadata.uid;
    if (step.action === 'delete') return (seen) => seen.uid === uid && seen.deleting;
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
    await this.environment.apply({
      apiVersion: apiVersionOf(primary),
      kind: primary.kind,
      metadata: { name: place.name, ...(namespace === undefined ? {} : { namespace }) },
      spec: step.spec,
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
    if (this.options.standIn !== false) await this.environment.markWorkloadsReady();
    const state = await observe(this.client, this.operator, place);
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
    await this.travel.close();
    this.client.close();
    await this.environment.stop();
  }
}
