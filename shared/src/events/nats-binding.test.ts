import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCodes } from '../errors/mod.js';
import type { ResourceRef } from '../kube/refs.js';
import { byReference, eventId, kubeEvent, type KubeCloudEvent } from './kube-event.js';
import {
  decodeNatsMessage,
  encodeBinary,
  encodeStructured,
  STRUCTURED_CONTENT_TYPE,
  type HeaderReader,
} from './nats-binding.js';

const resource: ResourceRef = {
  group: 'example.kubebus.dev',
  version: 'v1alpha1',
  resource: 'databaseclusters',
  namespaced: true,
};

function sample(): KubeCloudEvent {
  return kubeEvent({
    resource,
    op: 'update',
    reason: 'watch',
    source: 'https://127.0.0.1:6443',
    time: new Date('2026-11-30T00:00:00Z'),
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    object: {
      apiVersion: 'example.kubebus.dev/v1alpha1',
      kind: 'DatabaseCluster',
      metadata: {
        name: 'orders.prod',
        namespace: 'shop',
        uid: 'u-1',
        resourceVersion: '42',
        generation: 3,
      },
      spec: { engine: 'postgres' },
    },
  });
}

function headers(record: Readonly<Record<string, string>>): HeaderReader {
  return { keys: () => Object.keys(record), get: (key) => record[key] ?? '' };
}

describe('kube CloudEvents', () => {
  it('follow ApiServerSource: type, subject and extensions', () => {
    const event = sample();
    assert.equal(event.type, 'dev.knative.apiserver.resource.update');
    assert.equal(
      event.subject,
      '/apis/example.kubebus.dev/v1alpha1/namespaces/shop/databaseclusters/orders.prod',
    );
    assert.equal(event.kind, 'DatabaseCluster');
    assert.equal(event.apiversion, 'example.kubebus.dev/v1alpha1');
    assert.equal(event.id, eventId('u-1', '42', 'update'));
    assert.equal(event.id, 'u-1/42/update');
    assert.equal(event.kbgeneration, 3);
  });
});

describe('the NATS binding', () => {
  it('round-trips structured mode', () => {
    const event = sample();
    const { payload, headers: h } = encodeStructured(event);
    assert.equal(h['content-type'], STRUCTURED_CONTENT_TYPE);
    const decoded = decodeNatsMessage(payload, headers(h));
    assert.ok(decoded.ok);
    assert.deepEqual(decoded.event, event);
  });

  it('accepts binary mode (ce-* headers, data as payload)', () => {
    const event = sample();
    const { payload, headers: h } = encodeBinary(event);
    assert.equal(h['ce-id'], 'u-1/42/update');
    const decoded = decodeNatsMessage(payload, headers(h));
    assert.ok(decoded.ok, decoded.ok ? '' : decoded.error.message);
    assert.deepEqual(decoded.event, event);
  });

  it('carries by-reference events without data', () => {
    const event = byReference(sample());
    const decoded = decodeNatsMessage(encodeStructured(event).payload, undefined);
    assert.ok(decoded.ok);
    assert.equal(decoded.event.kbref, 'apiserver');
    assert.equal(decoded.event.data, undefined);
  });

  it('turns malformed messages into errors with a reason', () => {
    const cases: [Uint8Array, RegExp][] = [
      [new TextEncoder().encode('{not json'), /unreadable message/],
      [new Uint8Array([0xff, 0xfe]), /unreadable message/],
      [new TextEncoder().encode('{"specversion":"1.0"}'), /not a kubebus CloudEvent: id/],
      [
        encodeStructured({ ...sample(), type: 'com.example.other' as KubeCloudEvent['type'] })
          .payload,
        /type/,
      ],
    ];
    for (const [payload, reason] of cases) {
      const decoded = decodeNatsMessage(payload, undefined);
      assert.ok(!decoded.ok, `accepted: ${reason.source}`);
      assert.equal(decoded.error.code, ErrorCodes.MalformedMessage);
      assert.match(decoded.error.message, reason);
    }
  });

  it('refuses oversized messages before parsing them', () => {
    const decoded = decodeNatsMessage(new Uint8Array(2048), undefined, 1024);
    assert.ok(!decoded.ok);
    assert.equal(decoded.error.code, ErrorCodes.MessageTooLarge);
  });
});
