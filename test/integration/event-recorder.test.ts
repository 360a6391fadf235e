// Events recorded in the background (ADR 0029) on a real kube-apiserver with
// RBAC on: recording returns before the apiserver answers and the Event lands
// with the time it was recorded; an Event the apiserver refuses (a user
// without events.create) or whose namespace does not exist is dropped and
// counted after one try, never retried and never thrown at the caller.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import type { KubeObject } from '@kubebus/shared/events';
import {
  EventRecorder,
  KubeClient,
  loadKubeConfig,
  onceEventName,
  recordEvent,
  type EventDropReason,
} from '@kubebus/shared/kube';
import { Registry, restClientMetrics } from '@kubebus/shared/obs';
import { TestBed } from '../bed/testbed.js';
import { waitFor } from '../support/wait.js';

interface EventList {
  items: { reason?: string; eventTime?: string; regarding?: { uid?: string } }[];
}

const input = {
  type: 'Normal' as const,
  reason: 'BucketCreated',
  note: 'Created the backup bucket',
  action: 'Reconcile',
  reportingController: 'kubebus.dev/databasecluster',
  reportingInstance: 'test',
};

describe('Events recorded in the background, real apiserver', { timeout: 300_000 }, () => {
  let bed: TestBed;
  let admin: KubeClient;
  let configMap: KubeObject;

  const clientOf = async (kubeconfig: string) =>
    new KubeClient(await loadKubeConfig(kubeconfig), restClientMetrics(new Registry()));

  /** A recorder sending with `client`, counting the sends and what it dropped. */
  function recorderOf(client: KubeClient) {
    const dropped: EventDropReason[] = [];
    let sends = 0;
    const recorder = new EventRecorder(
      (object, event, send) => {
        sends++;
        return recordEvent(client, object, event, send);
      },
      { log: pino({ level: 'silent' }), onDropped: (reason) => dropped.push(reason) },
    );
    return { recorder, dropped, sends: () => sends };
  }

  const eventsAbout = async (uid: string) =>
    (
      await admin.request<EventList>('/apis/events.k8s.io/v1/namespaces/default/events')
    ).items.filter((event) => event.regarding?.uid === uid);

  before(async () => {
    bed = await TestBed.start();
    admin = await clientOf(bed.kubeconfigPath);
    configMap = await admin.request<KubeObject>('/api/v1/namespaces/default/configmaps', {
      method: 'POST',
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'recorded-about' } },
    });
  });
  after(async () => {
    await bed.stop();
  });

  it('returns before the apiserver answers; the Event lands with the time it was recorded', async () => {
    const { recorder, dropped } = recorderOf(admin);
    const recordedAt = Date.now();
    recorder.record(configMap, input);
    assert.equal(recorder.inFlight, 1, 'still being sent when record returned');
    await waitFor(
      async () => (await eventsAbout(configMap.metadata.uid)).length === 1,
      'the Event',
    );
    const [event] = await eventsAbout(configMap.metadata.uid);
    assert.equal(event?.reason, 'BucketCreated');
    const eventTime = Date.parse(event?.eventTime ?? '');
    assert.ok(
      Math.abs(eventTime - recordedAt) < 1_000,
      `eventTime ${event?.eventTime} is when it was recorded`,
    );
    assert.equal(await recorder.stop(30_000), 0);
    assert.deepEqual(dropped, []);
  });

  it('drops an Event the apiserver refuses, or in no namespace, after one try', async () => {
    const unprivileged = recorderOf(await clientOf(await bed.userKubeconfig('no-events')));
    unprivileged.recorder.record(configMap, input);
    await waitFor(() => unprivileged.dropped.length === 1, 'the forbidden Event dropped');
    assert.deepEqual(unprivileged.dropped, ['refused']);
    assert.equal(unprivileged.sends(), 1, 'a 403 is not retried');

    const elsewhere = recorderOf(admin);
    const ghost: KubeObject = {
      ...configMap,
      metadata: { ...configMap.metadata, namespace: 'no-such-namespace', uid: 'ghost' },
    };
    elsewhere.recorder.record(ghost, input);
    await waitFor(() => elsewhere.dropped.length === 1, 'the Event in no namespace dropped');
    assert.deepEqual(elsewhere.dropped, ['namespace_gone']);
    assert.equal(elsewhere.sends(), 1, 'a 404 is not retried');
    assert.deepEqual(await eventsAbout('ghost'), []);
  });

  it('records an Event named once a single time, however often and by whom it is sent', async () => {
    const announced = { ...input, reason: 'CredentialsCreated' };
    const name = onceEventName(configMap, 'databasecluster', 'credentials-created');
    const count = async () =>
      (await eventsAbout(configMap.metadata.uid)).filter((e) => e.reason === announced.reason)
        .length;
    const first = recorderOf(admin);
    first.recorder.record(configMap, announced, undefined, name);
    first.recorder.record(configMap, announced, undefined, name);
    assert.equal(await first.recorder.stop(30_000), 0);
    // a retry after a restart, or another replica: a recorder of its own
    const again = recorderOf(admin);
    again.recorder.record(configMap, announced, undefined, name);
    assert.equal(await again.recorder.stop(30_000), 0);
    assert.equal(again.sends(), 1, 'the 409 ends it: not retried');
    assert.equal(await count(), 1);
    assert.deepEqual([...first.dropped, ...again.dropped], []);
  });
});
