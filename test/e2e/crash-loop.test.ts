// An object whose reconcile kills its process (the OOM killer, a segfault in
// native code, `process.exit` in user code) is parked after maxCrashes
// deaths blamed on it (ADR 0022), whatever the process' memory held: a
// dead letter with the reason, Degraded=True like a spent retry budget, and
// `kubebus dlq redrive` brings it back. Before, its work mark was delivered
// for ever (`max_deliver: -1`, attempts counted in memory) and every replica
// crash-looped on it. The reconciler runs as a child process restarted like a
// supervisor (a kubelet) would; the other objects, in the same partition,
// keep converging and are never blamed.
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { DeadLetterSchema, Streams } from '@kubebus/shared/bus';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { crdOf } from '../../packages/kubebus/src/api/crd.js';
import { TestBed } from '../bed/testbed.js';
import { installCrd } from '../support/kube.js';
import { Fragile } from '../support/operators/fragiles.js';
import { ServiceProcess, kubebusArgs } from '../support/services.js';
import { readStream } from '../support/stream.js';
import { waitFor } from '../support/wait.js';

const OPERATOR = fileURLToPath(new URL('../support/operators/fragiles.ts', import.meta.url));
const target = { group: 'test.kubebus.dev', version: 'v1', plural: 'fragiles' };
const NAMESPACE = 'default';
/** the operator's maxCrashes (fragiles.ts): KUBEBUS_MAX_CRASHES from the definition */
const MAX_CRASHES = 2;
const RECONCILER_ENV = {
  // a death is noticed after the ack wait: short, so the test is
  KUBEBUS_ACK_WAIT: '2s',
};

interface FragileObject {
  metadata: { name: string; generation: number };
  status?: {
    seen?: number;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
}

/** Starts the reconciler again each time it dies, as a kubelet would, counting the deaths. */
class Supervisor {
  deaths = 0;
  #current: ServiceProcess | undefined;
  #stopped = false;
  readonly #loop: Promise<void>;

  constructor(start: () => Promise<ServiceProcess>) {
    this.#loop = (async () => {
      while (!this.#stopped) {
        const current = await start();
        this.#current = current;
        await waitFor(
          () => this.#stopped || current.process.exitCode !== undefined,
          'the reconciler to exit',
          3_600_000,
        );
        if (current.process.exitCode !== undefined) this.deaths++;
      }
    })();
  }

  get alive(): boolean {
    return this.#current?.process.exitCode === undefined;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#current?.stop();
    await this.#loop;
  }
}

describe('a reconcile that kills its process', { timeout: 600_000 }, () => {
  let bed: TestBed;
  let nc: NatsConnection;
  let supervisor: Supervisor;
  const services: ServiceProcess[] = [];

  before(async () => {
    bed = await TestBed.start();
    nc = await connect({ servers: bed.natsUrl });
    await installCrd(bed.kubeConfig(), crdOf(Fragile));
    services.push(await ServiceProcess.start(bed, 'watcher', {}, { operator: OPERATOR }));
    services.push(await ServiceProcess.start(bed, 'status-writer', {}, { operator: OPERATOR }));
    supervisor = new Supervisor(() =>
      ServiceProcess.start(bed, 'reconciler', RECONCILER_ENV, {
        operator: OPERATOR,
        waitReady: false,
      }),
    );
  });

  after(async () => {
    await supervisor.stop();
    for (const service of services) await service.stop();
    await nc.close();
    await bed.stop();
  });

  const custom = () => bed.kubeConfig().makeApiClient(CustomObjectsApi);
  const create = (name: string, crash: boolean) =>
    custom().createNamespacedCustomObject({
      ...target,
      namespace: NAMESPACE,
      body: {
        apiVersion: 'test.kubebus.dev/v1',
        kind: 'Fragile',
        metadata: { name },
        spec: { crash },
      },
    });
  const get = async (name: string) =>
    (await custom().getNamespacedCustomObject({
      ...target,
      namespace: NAMESPACE,
      name,
    })) as FragileObject;
  const converged = async (name: string) => {
    const object = await get(name);
    return object.status?.seen === object.metadata.generation;
  };
  const degraded = (object: FragileObject) =>
    object.status?.conditions?.find((c) => c.type === 'Degraded' && c.status === 'True');
  const letters = async () =>
    (await readStream(nc, Streams.deadLetters, 'kubebus.dlq.fragiles.>')).map((message) => ({
      seq: message.seq,
      letter: DeadLetterSchema.parse(JSON.parse(new TextDecoder().decode(message.data))),
    }));
  const kubebus = (...args: string[]) =>
    spawnSync(process.execPath, kubebusArgs(...args), {
      encoding: 'utf8',
      env: { ...process.env, KUBEBUS_NATS_URL: bed.natsUrl },
      timeout: 60_000,
      cwd: join(fileURLToPath(new URL('../..', import.meta.url))),
    });

  const calm = Array.from({ length: 6 }, (_, i) => `calm-${i}`);

  it('parks it after the bound with a dead letter, and the others converge', async () => {
    await Promise.all([
      ...calm.slice(0, 3).map((name) => create(name, false)),
      create('boom', true),
    ]);
    await waitFor(
      async () => degraded(await get('boom')) !== undefined,
      'the killing object to be marked Degraded',
      300_000,
    );
    const boom = await get('boom');
    const condition = degraded(boom);
    assert.equal(condition?.reason, 'RetryBudgetSpent');
    assert.match(
      condition?.message ?? '',
      new RegExp(`died while reconciling it ${MAX_CRASHES} times`),
    );
    // one death nobody could be blamed for (the first delivery), then the bound
    assert.ok(
      supervisor.deaths >= MAX_CRASHES + 1,
      `the reconciler died ${supervisor.deaths} times`,
    );
    const parked = (await letters()).filter(({ letter }) => letter.key.name === 'boom');
    assert.equal(parked.length, 1);
    assert.equal(parked[0]?.letter.code, 'KUBEBUS_CRASH_LOOP');
    assert.equal(parked[0]?.letter.attempts, MAX_CRASHES);

    // parked: the reconciler lives on, and objects old and new converge
    const deaths = supervisor.deaths;
    await Promise.all(calm.slice(3).map((name) => create(name, false)));
    await waitFor(
      async () => (await Promise.all(calm.map(converged))).every(Boolean),
      'every other object to converge',
      120_000,
    );
    assert.equal(
      supervisor.deaths,
      deaths,
      'the reconciler died again after the object was parked',
    );
    assert.ok(supervisor.alive);
    // nothing else was blamed, though it shared the partition with the killer
    assert.deepEqual(
      (await letters()).map(({ letter }) => letter.key.name),
      ['boom'],
    );
  });

  it('is brought back by kubebus dlq redrive, and parked again while it still kills', async () => {
    const [first] = await letters();
    assert.ok(first !== undefined);
    const deaths = supervisor.deaths;
    const redrive = kubebus('dlq', 'redrive', String(first.seq));
    assert.equal(redrive.status, 0, redrive.stderr);
    await waitFor(
      async () =>
        (await letters()).filter(({ letter }) => letter.key.name === 'boom').length === 1 &&
        supervisor.deaths >= deaths + MAX_CRASHES + 1,
      'the re-driven object to kill its process again until parked again',
      300_000,
    );
    const [again] = await letters();
    assert.equal(again?.letter.code, 'KUBEBUS_CRASH_LOOP');
    assert.notEqual(again?.seq, first.seq);
    // fixed in its spec, it is reconciled (a spec change leaves the park)
    await custom().patchNamespacedCustomObject(
      { ...target, namespace: NAMESPACE, name: 'boom', body: { spec: { crash: false } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await waitFor(() => converged('boom'), 'the fixed object to converge', 120_000);
  });
});
