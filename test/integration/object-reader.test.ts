// The object reader on a real nats-server: on a stream of one replica the
// primary's read is a direct get (the leader is the only server that holds
// the stream), so it costs no JetStream API request — the request whose
// JSON and base64 answer made it nats-server's most expensive read (issue
// #21) — and it still answers the latest revision, or nothing once deleted.
import { ObjectReader, Streams, subjects } from '@kubebus/shared/bus';
import { encodeBinary, kubeEvent, type ChangeOp, type KubeObject } from '@kubebus/shared/events';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { natsConfig, natsUrl, startNats, type NatsConfig } from '../bed/nats.js';
import type { ServerProcess } from '../bed/process.js';

const resource = { group: '', version: 'v1', resource: 'configmaps', namespaced: true };
const key = { group: '', resource: 'configmaps', namespace: 'ns', name: 'page' };

function configMap(resourceVersion: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'page', namespace: 'ns', uid: 'u1', resourceVersion },
    data: { rv: resourceVersion },
  };
}

describe('the object reader on a stream of one replica', { timeout: 120_000 }, () => {
  let dir: string;
  let config: NatsConfig;
  let server: ServerProcess;
  let nc: NatsConnection;
  let jsm: JetStreamManager;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kubebus-reader-'));
    config = await natsConfig(dir);
    server = await startNats(config);
    nc = await connect({ servers: natsUrl(config) });
    jsm = await jetstreamManager(nc);
    await jsm.streams.add({
      name: Streams.events,
      subjects: [subjects.allEvents],
      num_replicas: 1,
      allow_direct: true,
    });
  });

  after(async () => {
    await nc.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function record(resourceVersion: string, op: ChangeOp = 'update'): Promise<void> {
    const event = kubeEvent({
      resource,
      object: configMap(resourceVersion),
      op,
      reason: 'watch',
      source: 'https://apiserver',
      time: new Date(),
    });
    const { payload, headers } = encodeBinary(event);
    const h = natsHeaders();
    for (const [name, value] of Object.entries(headers)) h.set(name, value);
    await jsm.jetstream().publish(subjects.event(key), payload, { headers: h });
  }

  /** The reads' requests as nats-server receives them (a second connection's wiretap). */
  async function wiretap() {
    const tap = await connect({ servers: natsUrl(config) });
    const seen = { leader: 0, direct: 0 };
    tap.subscribe(`$JS.API.STREAM.MSG.GET.${Streams.events}`, {
      callback: () => {
        seen.leader++;
      },
    });
    tap.subscribe(`$JS.API.DIRECT.GET.${Streams.events}.>`, {
      callback: () => {
        seen.direct++;
      },
    });
    await tap.flush();
    return { seen, close: () => tap.close() };
  }

  it('answers the latest revision with direct gets, no leader request per read', async () => {
    const reader = new ObjectReader(jsm, () => Promise.resolve(undefined));
    const tap = await wiretap();
    try {
      await record('1');
      assert.equal((await reader.read(key))?.metadata.resourceVersion, '1');
      await record('2');
      assert.equal((await reader.read(key))?.metadata.resourceVersion, '2');
      await record('2', 'delete');
      assert.equal(await reader.read(key), undefined, 'a deleted object reads as gone');
      await nc.flush();
      assert.deepEqual(tap.seen, { leader: 0, direct: 3 });
    } finally {
      await tap.close();
    }
  });
});
