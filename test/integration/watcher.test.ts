// The watcher against a real kube-apiserver, etcd and nats-server: every change
// becomes exactly one CloudEvent, across kills, 410 Gone, silent streams and
// restarts of NATS and the apiserver.
import { DeadLetterSchema, Streams, WorkMarkSchema } from '@kubebus/shared/bus';
import { opOf, type KubeCloudEvent } from '@kubebus/shared/events';
import {
  CoreV1Api,
  CustomObjectsApi,
  type KubernetesObject,
  type V1ConfigMap,
} from '@kubernetes/client-node';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { TestBed } from '../bed/testbed.js';
import { TEST_GROUP, installCrd, objects, widget, widgetCrd } from '../support/kube.js';
import { ServiceProcess, WIDGETS_OPERATOR, kubebusArgs } from '../support/services.js';
import {
  readEvents,
  readLastPerSubject,
  readStream,
  type StoredMessage,
} from '../support/stream.js';
import { waitFor } from '../support/wait.js';

const MAX_PAYLOAD = 256 * 1024;
/** What kubebus labels the objects it applies with: the watcher watches owned kinds by it. */
const MANAGED = { 'app.kubernetes.io/managed-by': 'kubebus' };

type Written = KubernetesObject & { metadata: { uid: string; resourceVersion: string } };

describe('watcher', { timeout: 600_000 }, () => {
  let bed: TestBed;
  let nc: NatsConnection;
  const running: ServiceProcess[] = [];

  const startWatcher = async (env: Record<string, string> = {}) => {
    // the widgets operator declares 4 work partitions
    const watcher = await ServiceProcess.start(
      bed,
      'watcher',
      { KUBEBUS_CURSOR_FLUSH: '100ms', ...env },
      { operator: WIDGETS_OPERATOR },
    );
    running.push(watcher);
    return watcher;
  };

  before(async () => {
    bed = await TestBed.start({ nats: { extraConfig: `max_payload: ${MAX_PAYLOAD}` } });
    nc = await connect({ servers: bed.natsUrl, maxReconnectAttempts: -1 });
    await installCrd(bed.kubeConfig(), widgetCrd);
  });

  after(async () => {
    for (const service of running) await service.stop();
    await nc.close();
    await bed.stop();
  });

  const api = () => objects(bed.kubeConfig());
  const core = () => bed.kubeConfig().makeApiClient(CoreV1Api);
  const createNamespace = (name: string) =>
    core().createNamespace({ body: { metadata: { name } } });
  const widgetEvents = (namespace: string) =>
    readEvents(nc, `kubebus.events.${TEST_GROUP.replaceAll('.', '_')}.widgets.${namespace}.>`);

  it('publishes one event per change, in order, with Knative attributes and dotted names', async () => {
    const watcher = await startWatcher();
    await createNamespace('basic');
    const created = (await api().create(widget('db.orders.v2', { size: 1 }, 'basic'))) as Written;
    const updated1 = (await api().patch(
      { ...widget('db.orders.v2', { size: 2 }, 'basic') },
      undefined, undefined, 'test', true, 'application/apply-patch+yaml',
    )) as Written; // prettier-ignore
    const updated2 = (await api().patch(
      { ...widget('db.orders.v2', { size: 3 }, 'basic') },
      undefined, undefined, 'test', true, 'application/apply-patch+yaml',
    )) as Written; // prettier-ignore
    await api().delete(widget('db.orders.v2', {}, 'basic'));

    const subject = `kubebus.events.test_kubebus_dev.widgets.basic.db_orders_v2`;
    let events: KubeCloudEvent[] = [];
    await waitFor(async () => {
      events = await readEvents(nc, subject);
      return events.length >= 4;
    }, 'four events for the widget').catch((error: unknown) => {
      throw new Error(`events so far: ${JSON.stringify(events.map((e) => [e.type, e.kbrv]))}`, {
        cause: error,
      });
    });
    assert.deepEqual(
      events.map((e) => [opOf(e), e.kbrv]),
      [
        ['add', created.metadata.resourceVersion],
        ['update', updated1.metadata.resourceVersion],
        ['update', updated2.metadata.resourceVersion],
        ['delete', events[3]?.kbrv],
      ],
    );
    const first = events[0];
    assert.ok(first);
    assert.equal(first.id, `${created.metadata.uid}/${created.metadata.resourceVersion}/add`);
    assert.equal(first.type, 'dev.knative.apiserver.resource.add');
    assert.equal(first.source, bed.apiserverUrl);
    assert.equal(first.subject, `/apis/${TEST_GROUP}/v1/namespaces/basic/widgets/db.orders.v2`);
    assert.equal(first.kind, 'Widget');
    assert.equal(first.name, 'db.orders.v2');
    assert.equal(first.namespace, 'basic');
    assert.equal(first.apiversion, `${TEST_GROUP}/v1`);
    assert.equal(first.kbreason, 'watch');
    assert.match(first.traceparent ?? '', /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    assert.deepEqual((first.data as { spec?: unknown }).spec, { size: 1 });
    assert.equal((first.data?.metadata as Record<string, unknown>)['managedFields'], undefined);
    assert.equal(events[3]?.type, 'dev.knative.apiserver.resource.delete');

    // The work queue holds one pending mark for the object: the burst coalesced.
    const workFilter = `kubebus.work.widgets.*.test_kubebus_dev.widgets.basic.db_orders_v2`;
    const work = await (
      await jetstreamManager(nc)
    ).streams.info(Streams.work, {
      subjects_filter: workFilter,
    });
    assert.deepEqual(Object.values(work.state.subjects ?? {}), [1]);
    const marks = await readLastPerSubject(nc, Streams.work, workFilter);
    const [lastMark] = marks;
    assert.ok(lastMark);
    const mark = WorkMarkSchema.parse(JSON.parse(new TextDecoder().decode(lastMark.data)));
    assert.equal(mark.eventId, events.at(-1)?.id, 'the pending mark is the latest change');
    assert.ok((await watcher.metric('kubebus_watch_events_total', { type: 'ADDED' })) >= 1);
    assert.ok((await watcher.metric('rest_client_requests_total')) > 0);
  });

  it('marks the owner dirty when an owned object changes, and never publishes secret data', async () => {
    await createNamespace('owned');
    const owner = (await api().create(widget('owner', { size: 1 }, 'owned'))) as Written;
    const ownerReferences = [
      {
        apiVersion: `${TEST_GROUP}/v1`,
        kind: 'Widget',
        name: 'owner',
        uid: owner.metadata.uid,
        controller: true,
      },
    ];
    // Consume the owner's own mark, so the next one can only come from the owned object.
    const ownerMarks = `kubebus.work.widgets.*.test_kubebus_dev.widgets.owned.owner`;
    await waitFor(
      async () => (await readLastPerSubject(nc, Streams.work, ownerMarks)).length === 1,
      'the owner mark',
    );
    await purge(nc, Streams.work, ownerMarks);

    await core().createNamespacedConfigMap({
      namespace: 'owned',
      body: {
        metadata: { name: 'owner-config', labels: MANAGED, ownerReferences },
        data: { a: '1' },
      },
    });
    await core().createNamespacedSecret({
      namespace: 'owned',
      body: {
        metadata: { name: 'owner-credentials', labels: MANAGED, ownerReferences },
        stringData: { password: 'hunter2-never-on-the-bus' },
      },
    });
    await waitFor(
      async () => (await readLastPerSubject(nc, Streams.work, ownerMarks)).length === 1,
      'an owner mark',
    );
    const mark = WorkMarkSchema.parse(
      JSON.parse(
        new TextDecoder().decode((await readLastPerSubject(nc, Streams.work, ownerMarks))[0]?.data),
      ),
    );
    assert.equal(mark.reason, 'owned');
    // and says whose change it was: the last of the two owned objects
    assert.match(
      mark.cause ?? '',
      /^(configmaps owned\/owner-config|secrets owned\/owner-credentials)$/,
    );

    let secretEvents: KubeCloudEvent[] = [];
    await waitFor(async () => {
      secretEvents = await readEvents(nc, 'kubebus.events.~.secrets.owned.>');
      return secretEvents.length === 1;
    }, 'the secret event');
    const raw =
      JSON.stringify(
        (await readStream(nc, Streams.events, 'kubebus.events.~.secrets.owned.>'))[0]?.headers,
      ) +
      new TextDecoder().decode(
        (await readStream(nc, Streams.events, 'kubebus.events.~.secrets.owned.>'))[0]?.data,
      );
    assert.doesNotMatch(raw, /hunter2/);
    assert.doesNotMatch(
      raw,
      new RegExp(Buffer.from('hunter2-never-on-the-bus').toString('base64').slice(0, 16)),
    );
    assert.equal((secretEvents[0]?.data as Record<string, unknown>)['data'], undefined);
    // listed and watched as metadata only: not even the Secret's type reached the watcher,
    // and the event still says what it is
    const recorded = secretEvents[0]?.data as Record<string, unknown>;
    assert.equal(recorded['kind'], 'Secret');
    assert.equal(recorded['apiVersion'], 'v1');
    assert.equal(recorded['type'], undefined);
  });

  it('publishes only the owned objects kubebus manages: a foreign ConfigMap or Secret never reaches the bus', async () => {
    await createNamespace('tenant');
    await core().createNamespacedConfigMap({
      namespace: 'tenant',
      body: { metadata: { name: 'foreign' }, data: { token: 'foreign-data-never-on-the-bus' } },
    });
    await core().createNamespacedSecret({
      namespace: 'tenant',
      body: { metadata: { name: 'foreign-secret' }, stringData: { a: 'b' } },
    });
    await core().createNamespacedConfigMap({
      namespace: 'tenant',
      body: { metadata: { name: 'ours', labels: MANAGED }, data: { a: 'b' } },
    });
    // the labelled one is published, after the foreign ones were created: they had their chance
    await waitFor(
      async () =>
        (await readEvents(nc, 'kubebus.events.~.configmaps.tenant.>')).some(
          (e) => e.name === 'ours',
        ),
      'the managed ConfigMap',
    );
    const events = [
      ...(await readStream(nc, Streams.events, 'kubebus.events.~.configmaps.tenant.>')),
      ...(await readStream(nc, Streams.events, 'kubebus.events.~.secrets.tenant.>')),
    ];
    assert.deepEqual(
      events.map((m) => (JSON.parse(new TextDecoder().decode(m.data)) as { name?: string }).name),
      ['ours'],
    );
    for (const m of events) assert.doesNotMatch(new TextDecoder().decode(m.data), /foreign/);
  });

  it('publishes objects larger than the NATS max payload by reference, and goes on', async () => {
    await createNamespace('large');
    const big: V1ConfigMap = {
      metadata: { name: 'big', labels: MANAGED },
      data: { blob: 'x'.repeat(MAX_PAYLOAD + 10_000) },
    };
    await core().createNamespacedConfigMap({ namespace: 'large', body: big });
    await core().createNamespacedConfigMap({
      namespace: 'large',
      body: { metadata: { name: 'small', labels: MANAGED }, data: { a: 'b' } },
    });
    let events: KubeCloudEvent[] = [];
    await waitFor(async () => {
      events = await readEvents(nc, 'kubebus.events.~.configmaps.large.>');
      return events.length === 2;
    }, 'both config map events');
    const byRef = events.find((e) => e.name === 'big');
    assert.ok(byRef);
    assert.equal(byRef.kbref, 'apiserver');
    assert.equal(byRef.data, undefined);
    assert.equal(byRef.subject, '/api/v1/namespaces/large/configmaps/big');
    assert.ok(events.find((e) => e.name === 'small')?.data);
  });

  it('parks a change the stream keeps rejecting in the DLQ with the reason, and goes on', async () => {
    await createNamespace('rejected');
    const jsm = await jetstreamManager(nc);
    const config = (await jsm.streams.info(Streams.events)).config;
    // The stream now refuses messages over 16 KiB, though NATS itself would carry them.
    await jsm.streams.update(Streams.events, { ...config, max_msg_size: 16 * 1024 });
    try {
      await core().createNamespacedConfigMap({
        namespace: 'rejected',
        body: {
          metadata: { name: 'refused', labels: MANAGED },
          data: { blob: 'y'.repeat(32 * 1024) },
        },
      });
      let letters: StoredMessage[] = [];
      await waitFor(async () => {
        letters = await readStream(
          nc,
          Streams.deadLetters,
          'kubebus.dlq.widgets_watcher.~.configmaps.rejected.>',
        );
        return letters.length === 1;
      }, 'the dead letter');
      const letter = DeadLetterSchema.parse(JSON.parse(new TextDecoder().decode(letters[0]?.data)));
      assert.equal(letter.origin, 'widgets.watcher');
      assert.equal(letter.key.name, 'refused');
      assert.match(letter.reason, /maximum|size/i);
    } finally {
      await jsm.streams.update(Streams.events, config);
    }
    await core().createNamespacedConfigMap({
      namespace: 'rejected',
      body: { metadata: { name: 'accepted', labels: MANAGED }, data: { a: 'b' } },
    });
    await waitFor(
      async () =>
        (await readEvents(nc, 'kubebus.events.~.configmaps.rejected.>')).some(
          (e) => e.name === 'accepted',
        ),
      'the next change to be published',
    );
  });

  it('loses and doubles nothing when killed mid-stream (SIGKILL) and restarted', async () => {
    await createNamespace('kill');
    for (const service of running.splice(0)) await service.stop();
    const watcher = await startWatcher();
    const written: Written[] = [];
    const writes = (async () => {
      for (let i = 0; i < 120; i++) {
        const name = `w${i % 12}`;
        const body = widget(name, { round: i }, 'kill');
        written.push(
          (await (i < 12
            ? api().create(body)
            : api().patch(
                body,
                undefined,
                undefined,
                'test',
                true,
                'application/apply-patch+yaml',
              ))) as Written,
        );
      }
    })();
    await waitFor(() => written.length >= 40, '40 writes');
    await watcher.kill();
    running.splice(running.indexOf(watcher), 1);
    await waitFor(() => written.length >= 80, '80 writes');
    await startWatcher();
    await writes;

    const expected = new Set(written.map((w) => `${w.metadata.uid}/${w.metadata.resourceVersion}`));
    let events: KubeCloudEvent[] = [];
    await waitFor(
      async () => {
        events = await widgetEvents('kill');
        return events.length >= expected.size;
      },
      `${expected.size} events`,
      60_000,
    );
    const seen = events.map((e) => `${e.kbuid}/${e.kbrv}`);
    assert.equal(new Set(seen).size, seen.length, 'no change is stored twice');
    assert.deepEqual(new Set(seen), expected, 'every change is stored');
  });

  it('relists after 410 Gone and publishes synthetic deletes and updates for the gap', async () => {
    await createNamespace('gone');
    for (const service of running.splice(0)) await service.stop();
    const kept = (await api().create(widget('kept', { v: 1 }, 'gone'))) as Written;
    const doomed = (await api().create(widget('doomed', { v: 1 }, 'gone'))) as Written;
    const first = (await api().create(widget('reborn', { v: 1 }, 'gone'))) as Written;
    let watcher = await startWatcher();
    await waitFor(async () => (await widgetEvents('gone')).length === 3, 'the three creates');
    await watcher.stop();
    running.splice(running.indexOf(watcher), 1);

    const changed = (await api().patch(widget('kept', { v: 2 }, 'gone'), undefined, undefined, 'test', true, 'application/apply-patch+yaml')) as Written; // prettier-ignore
    await api().delete(widget('doomed', {}, 'gone'));
    const born = (await api().create(widget('born', { v: 1 }, 'gone'))) as Written;
    // deleted and made again in the gap: another object of the same name
    await api().delete(widget('reborn', {}, 'gone'));
    const again = (await api().create(widget('reborn', { v: 2 }, 'gone'))) as Written;
    await bed.compactEtcd();
    await bed.restartApiserver(); // its watch cache, which could still serve the gap, starts empty

    watcher = await startWatcher();
    let events: KubeCloudEvent[] = [];
    await waitFor(async () => {
      events = await widgetEvents('gone');
      return events.length >= 8;
    }, 'the relist events');
    const after = events.slice(3).map((e) => [e.name, opOf(e), e.kbreason, e.kbrv]);
    assert.deepEqual(
      after.toSorted(),
      [
        ['born', 'add', 'relist', born.metadata.resourceVersion],
        ['doomed', 'delete', 'relist', doomed.metadata.resourceVersion],
        ['kept', 'update', 'relist', changed.metadata.resourceVersion],
        ['reborn', 'delete', 'relist', first.metadata.resourceVersion],
        ['reborn', 'add', 'relist', again.metadata.resourceVersion],
      ].toSorted(),
    );
    // the name's last record is the live object: its earlier one's tombstone came first
    const reborn = events.filter((e) => e.name === 'reborn').slice(1);
    assert.deepEqual(
      reborn.map((e) => [opOf(e), e.kbuid]),
      [
        ['delete', first.metadata.uid],
        ['add', again.metadata.uid],
      ],
    );
    assert.equal(
      kept.metadata.uid,
      events.find((e) => e.name === 'kept' && e.kbreason === 'relist')?.kbuid,
    );
    assert.ok((await watcher.metric('kubebus_watch_relists_total')) >= 1);
  });

  it('publishes everything that changed while NATS and then the apiserver restarted', async () => {
    await createNamespace('restarts');
    const watcher = running[0] ?? (await startWatcher());
    const latest = new Map<string, Written>();
    const duringNatsOutage: Written[] = [];
    const write = async (i: number) => {
      const body = widget(`r${i % 5}`, { round: i }, 'restarts');
      const result = (await api().patch(
        body,
        undefined,
        undefined,
        'test',
        true,
        'application/apply-patch+yaml',
      )) as Written;
      latest.set(result.metadata.uid, result);
      return result;
    };
    for (let i = 0; i < 10; i++) await write(i);
    await bed.stopNats('kill');
    for (let i = 10; i < 30; i++) duringNatsOutage.push(await write(i));
    const natsConnected = async () =>
      /^kubebus_nats_connected (\d)$/m.exec((await watcher.get('/metrics')).body)?.[1];
    await waitFor(async () => (await natsConnected()) === '0', 'the watcher to see NATS gone');
    // a NATS outage is every replica's: not a reason to be unready (ADR 0036)
    assert.equal((await watcher.get('/readyz')).status, 200);
    await bed.startNats();
    await waitFor(async () => (await natsConnected()) === '1', 'the watcher to reconnect');
    await bed.restartApiserver({ how: 'kill' });
    for (let i = 30; i < 40; i++) await write(i);

    let events: KubeCloudEvent[] = [];
    const stored = () => new Set(events.map((e) => `${e.kbuid}/${e.kbrv}`));
    await waitFor(
      async () => {
        events = await widgetEvents('restarts');
        const have = stored();
        return [...latest.values()].every((w) =>
          have.has(`${w.metadata.uid}/${w.metadata.resourceVersion}`),
        );
      },
      'the latest state of every object',
      90_000,
    );
    const have = stored();
    for (const w of duringNatsOutage) {
      assert.ok(
        have.has(`${w.metadata.uid}/${w.metadata.resourceVersion}`),
        `change ${w.metadata.resourceVersion} made while NATS was down`,
      );
    }
    const ids = events.map((e) => e.id);
    assert.equal(new Set(ids).size, ids.length, 'no event is stored twice');
  });

  it('reconnects a silent watch stream (apiserver frozen) and goes on', async () => {
    await createNamespace('silent');
    for (const service of running.splice(0)) await service.stop();
    const watcher = await startWatcher({
      KUBEBUS_WATCH_INACTIVITY: '2s',
      KUBEBUS_BACKOFF_CAP: '1s',
    });
    await api().create(widget('before', {}, 'silent'));
    await waitFor(async () => (await widgetEvents('silent')).length === 1, 'the first event');
    bed.signal('apiserver', 'SIGSTOP');
    try {
      await waitFor(
        async () =>
          (await watcher.metric('kubebus_watch_restarts_total', { reason: 'stalled' })) +
            (await watcher.metric('kubebus_watch_restarts_total', { reason: 'error' })) >=
          1,
        'the watcher to notice the silence',
      );
    } finally {
      bed.signal('apiserver', 'SIGCONT');
    }
    await api().create(widget('after', {}, 'silent'));
    await waitFor(
      async () => (await widgetEvents('silent')).length === 2,
      'the event after the thaw',
      60_000,
    );
  });

  it('stores each change once with two watchers running (active-active)', async () => {
    await createNamespace('twins');
    const first = running[0] ?? (await startWatcher());
    const second = await startWatcher({ KUBEBUS_WATCHER_ID: 'twin' });
    await first.waitReady();
    const written: Written[] = [];
    for (let i = 0; i < 30; i++) {
      const body = widget(`t${i % 6}`, { round: i }, 'twins');
      written.push(
        (await api().patch(
          body,
          undefined,
          undefined,
          'test',
          true,
          'application/apply-patch+yaml',
        )) as Written,
      );
    }
    let events: KubeCloudEvent[] = [];
    await waitFor(async () => {
      events = await widgetEvents('twins');
      return events.length >= written.length;
    }, 'all twin events');
    await waitFor(
      async () =>
        (await second.metric('kubebus_events_published_total', { duplicate: 'true' })) +
          (await first.metric('kubebus_events_published_total', { duplicate: 'true' })) >
        0,
      'duplicates to be reported',
    );
    const ids = events.map((e) => e.id);
    assert.equal(new Set(ids).size, ids.length, 'no change is stored twice');
    assert.equal(ids.length, written.length);
  });

  it('marks every primary object dirty again on each resync period', async () => {
    for (const service of running.splice(0)) await service.stop();
    const jsm = await jetstreamManager(nc);
    await jsm.streams.purge(Streams.work);
    const watcher = await startWatcher({ KUBEBUS_RESYNC_PERIOD: '2s' });
    await waitFor(async () => (await watcher.metric('kubebus_resync_marks_total')) > 0, 'a resync');
    const existing = (await bed
      .kubeConfig()
      .makeApiClient(CustomObjectsApi)
      .listClusterCustomObject({ group: TEST_GROUP, version: 'v1', plural: 'widgets' })) as {
      items: { metadata: { namespace: string; name: string } }[];
    };
    const expected = existing.items.map((w) => `${w.metadata.namespace}/${w.metadata.name}`).sort();
    let marked: string[] = [];
    await waitFor(async () => {
      const marks = (await readLastPerSubject(nc, Streams.work, 'kubebus.work.widgets.>')).map(
        (m) => WorkMarkSchema.parse(JSON.parse(new TextDecoder().decode(m.data))),
      );
      assert.ok(marks.every((mark) => mark.reason === 'resync'));
      marked = marks.map((mark) => `${mark.key.namespace}/${mark.key.name}`).sort();
      return marked.length === expected.length;
    }, 'a resync mark for every widget');
    assert.deepEqual(marked, expected);
  });

  it('watches only the namespaces it is given', async () => {
    for (const service of running.splice(0)) await service.stop();
    await createNamespace('scope-a');
    await createNamespace('scope-b');
    await createNamespace('scope-c');
    await startWatcher({
      KUBEBUS_WATCH_NAMESPACES: 'scope-a, scope-b',
      KUBEBUS_WATCHER_ID: 'scoped',
    });
    for (const ns of ['scope-c', 'scope-a', 'scope-b']) await api().create(widget('w', {}, ns));
    await waitFor(
      async () =>
        (await widgetEvents('scope-a')).length === 1 &&
        (await widgetEvents('scope-b')).length === 1,
      'the events of the watched namespaces',
    );
    assert.equal((await widgetEvents('scope-c')).length, 0, 'scope-c is not watched');
  });

  it('fails at start with a message naming a bad configuration value', () => {
    const result = spawnSync(
      process.execPath,
      kubebusArgs('run', WIDGETS_OPERATOR, '--role', 'watcher'),
      {
        env: {
          ...process.env,
          KUBECONFIG: bed.kubeconfigPath,
          KUBEBUS_NATS_URL: bed.natsUrl,
          KUBEBUS_PUBLISH_MAX_IN_FLIGHT: 'zero',
          KUBEBUS_RESYNC_PERIOD: 'often',
        },
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    assert.equal(result.status, 2);
    assert.match(result.stderr, /KUBEBUS_PUBLISH_MAX_IN_FLIGHT: .*\(got "zero"\)/);
    assert.match(result.stderr, /KUBEBUS_RESYNC_PERIOD: expected a duration/);
  });
});

async function purge(nc: NatsConnection, stream: string, filter: string): Promise<void> {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.purge(stream, { filter });
}
