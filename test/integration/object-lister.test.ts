// ctx.list and pruning read what a resource holds from the bus, on a real
// nats-server: in one batched direct get, and — past the 1024 subjects one
// batch answers, or without batches — in one ordered-consumer pass, never a
// LIST of the apiserver, which the reconciler's RBAC does not grant (a newcomer
// met 403s and a dead letter there).
import { applyTopology, defaultTopology, type BusConnection } from '@kubebus/shared/bus';
import { kinds } from '@kubebus/shared/definition';
import type { KubeObject } from '@kubebus/shared/events';
import type { KubeClient } from '@kubebus/shared/kube';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BusLister } from '../../services/reconciler/src/operator/object-lister.js';
import { recordRevision } from '../support/recorded-revision.js';
import { standaloneNats, type StandaloneNats } from '../support/standalone-nats.js';

const configMaps = {
  group: '',
  version: 'v1',
  resource: 'configmaps',
  kind: 'ConfigMap',
  namespaced: true,
};

function configMap(namespace: string, name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { namespace, name, uid: `uid-${namespace}-${name}`, resourceVersion: '1' },
    data: { name },
  };
}

/** An apiserver client that counts what is asked of it and answers nothing. */
function refusingApiserver() {
  const asked: string[] = [];
  const refuse = (path: string) => {
    asked.push(path);
    return Promise.reject(new Error(`403 Forbidden: ${path}`));
  };
  return { client: { request: refuse, getIfExists: refuse } as unknown as KubeClient, asked };
}

describe('listing from the bus', { timeout: 180_000 }, () => {
  let nats: StandaloneNats;
  let jsm: JetStreamManager;
  let bus: BusConnection;
  /** names in "many" still there: more than one batch answers */
  const many = new Set<string>();

  before(async () => {
    nats = await standaloneNats('object-lister');
    await applyTopology(nats.nc, defaultTopology, 'apply');
    jsm = await jetstreamManager(nats.nc);
    bus = { nc: nats.nc, connected: () => true };
    for (let start = 0; start < 1_100; start += 100) {
      await Promise.all(
        Array.from({ length: 100 }, async (_, offset) => {
          const name = `cm-${String(start + offset)}`;
          await recordRevision(jsm, configMaps, configMap('many', name), 'add');
          many.add(name);
        }),
      );
    }
    // deleted objects are not listed; another namespace is not either
    for (const name of ['cm-3', 'cm-500', 'cm-1099']) {
      await recordRevision(jsm, configMaps, configMap('many', name), 'delete');
      many.delete(name);
    }
    await recordRevision(jsm, configMaps, configMap('few', 'only'), 'add');
    await recordRevision(jsm, configMaps, configMap('few', 'only'), 'update');
  });

  after(async () => {
    await nats.stop();
  });

  const names = (objects: readonly KubeObject[]) =>
    new Set(objects.map((object) => object.metadata.name));

  it('answers a small namespace in one batch', async () => {
    const { client, asked } = refusingApiserver();
    const listed = await new BusLister(bus, client, true).list(kinds.ConfigMap, 'few');
    assert.deepEqual([...names(listed)], ['only']);
    assert.deepEqual(asked, []);
  });

  it('answers past one batch from the bus, not the apiserver', async () => {
    const { client, asked } = refusingApiserver();
    const listed = await new BusLister(bus, client, true).list(kinds.ConfigMap, 'many');
    assert.equal(listed.length, many.size);
    assert.deepEqual(names(listed), many);
    assert.deepEqual(asked, [], 'no request to the apiserver');
  });

  it('answers without batched gets (nats-server before 2.11) from the bus too', async () => {
    const { client, asked } = refusingApiserver();
    const lister = new BusLister(bus, client, false);
    assert.deepEqual(names(await lister.list(kinds.ConfigMap, 'many')), many);
    assert.deepEqual([...names(await lister.list(kinds.ConfigMap, 'few'))], ['only']);
    const everywhere = await lister.list(kinds.ConfigMap, undefined);
    assert.equal(everywhere.length, many.size + 1);
    assert.deepEqual(asked, []);
  });
});
