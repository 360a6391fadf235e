// `kubebus run` with every role in one process writes each status inside the
// reconcile that produced it (ADR 0028), through the status writer's own
// applier: under its field manager, at the object's generation, recorded for
// `kubebus history` — and not one intent crosses the bus. The same process
// keeps converging when the spec changes. (Where each intent goes when the
// writer declines or an older one waits on the bus: test/integration/status-handoff.test.ts.)
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { Streams, durableNames } from '@kubebus/shared/bus';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { TestBed } from '../bed/testbed.js';
import { TEST_GROUP, installCrd, objects, widget, widgetCrd } from '../support/kube.js';
import { ServiceProcess, WIDGETS_OPERATOR, kubebusArgs } from '../support/services.js';
import { waitFor } from '../support/wait.js';

const NAMESPACE = 'handoff';
const WIDGETS = 12;
/** the widgets operator's controller, and the status partitions its users are generated for */
const CONTROLLER = 'widgets';
const STATUS_PARTITIONS = 4;

interface WidgetStatus {
  observedGeneration?: number;
  conditions?: { type: string; status: string }[];
}
interface StoredWidget {
  metadata: {
    generation: number;
    managedFields?: { manager: string; subresource?: string }[];
  };
  status?: WidgetStatus;
}

describe('statuses written in the process that reconciles', { timeout: 300_000 }, () => {
  let bed: TestBed;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let operator: ServiceProcess;

  before(async () => {
    bed = await TestBed.start();
    nc = await connect({ servers: bed.natsUrl });
    jsm = await jetstreamManager(nc);
    await installCrd(bed.kubeConfig(), widgetCrd);
    await bed
      .kubeConfig()
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: NAMESPACE } } });
    operator = await ServiceProcess.start(
      bed,
      'all',
      { KUBEBUS_STATUS_PARTITIONS: String(STATUS_PARTITIONS) },
      { operator: WIDGETS_OPERATOR },
    );
  });

  after(async () => {
    await operator?.stop();
    await nc?.close();
    await bed?.stop();
  });

  const read = async (name: string) =>
    (await bed.kubeConfig().makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
      group: TEST_GROUP,
      version: 'v1',
      namespace: NAMESPACE,
      plural: 'widgets',
      name,
    })) as StoredWidget;
  const names = Array.from({ length: WIDGETS }, (_, i) => `w-${i}`);
  /** Every widget reports its current generation reconciled, Ready. */
  const allConverged = async () => {
    for (const name of names) {
      const stored = await read(name);
      const ready = stored.status?.conditions?.find((c) => c.type === 'Ready');
      if (stored.status?.observedGeneration !== stored.metadata.generation) return false;
      if (ready?.status !== 'True') return false;
    }
    return true;
  };
  /** Messages the status writer's durable consumers were ever handed. */
  const deliveredOnTheBus = async () => {
    let delivered = 0;
    for (let partition = 0; partition < STATUS_PARTITIONS; partition++) {
      const info = await jsm.consumers.info(
        Streams.status,
        durableNames.status(CONTROLLER, partition),
      );
      delivered += info.delivered.stream_seq;
    }
    return delivered;
  };

  it('writes every status in process, under the status writer, and none through the bus', async () => {
    const api = objects(bed.kubeConfig());
    for (const name of names) await api.create(widget(name, { size: 1 }, NAMESPACE));
    await waitFor(allConverged, `${WIDGETS} widgets Ready at generation 1`, 120_000);

    assert.ok(
      (await operator.metric('kubebus_status_handoffs_total', { path: 'in_process' })) >= WIDGETS,
      'each status was handed over in process',
    );
    assert.equal(await deliveredOnTheBus(), 0, 'no status intent reached a consumer');
    const stored = await read(names[0] ?? '');
    assert.ok(
      stored.metadata.managedFields?.some(
        (f) => f.manager === 'kubebus-status-writer' && f.subresource === 'status',
      ),
      `the status is the status writer's: ${JSON.stringify(stored.metadata.managedFields)}`,
    );

    // a spec change: the next generation's status, the same way
    for (const name of names)
      await api.patch(
        widget(name, { size: 2 }, NAMESPACE),
        undefined,
        undefined,
        'test',
        true,
        'application/apply-patch+yaml',
      );
    await waitFor(
      async () => {
        const generations = await Promise.all(names.map(async (n) => (await read(n)).metadata));
        return generations.every((m) => m.generation === 2) && (await allConverged());
      },
      `${WIDGETS} widgets Ready at generation 2`,
      120_000,
    );
    assert.equal(await deliveredOnTheBus(), 0);
  });

  it('keeps its watches off the connection that carries its writes (ADR 0033)', async () => {
    // one HTTP/2 connection for the reconciler's and the status writer's requests, one for
    // the watcher's lists and watches; with every role on one, the watch events came late
    assert.equal(await operator.metric('kubebus_rest_client_connections_total'), 2);
  });

  it("shows the status writer's write in the object's history, in the reconcile's trace", () => {
    const history = spawnSync(
      process.execPath,
      kubebusArgs('history', `widgets.${TEST_GROUP}`, `${NAMESPACE}/w-0`),
      { encoding: 'utf8', env: { ...process.env, KUBEBUS_NATS_URL: bed.natsUrl }, timeout: 60_000 },
    );
    assert.equal(history.status, 0, history.stderr);
    const lines = history.stdout.split('\n');
    const traceOf = (line: string | undefined) => / trace (\S+)$/.exec(line ?? '')?.[1];
    const written = lines.find((l) =>
      /→ widgets\.status-writer success in \d+ ms, wrote rv \d+/.test(l),
    );
    assert.ok(written, history.stdout);
    const reconciled = lines.filter((l) => /→ widgets success /.test(l)).map(traceOf);
    assert.ok(reconciled.includes(traceOf(written)), history.stdout);
  });
});
