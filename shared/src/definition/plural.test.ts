import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { defineResource, pluralOf } from './resource.js';

test('a kind is made plural as kubebuilder makes it', () => {
  const plurals = Object.fromEntries(
    ['Delivery', 'Policy', 'Gateway', 'Ingress', 'Box', 'Status', 'Match', 'Mesh', 'Tenant'].map(
      (kind) => [kind, pluralOf(kind)],
    ),
  );
  assert.deepEqual(plurals, {
    Delivery: 'deliveries',
    Policy: 'policies',
    Gateway: 'gateways',
    Ingress: 'ingresses',
    Box: 'boxes',
    Status: 'statuses',
    Match: 'matches',
    Mesh: 'meshes',
    Tenant: 'tenants',
  });
});

test('a resource takes it by default, and a plural it names over it', () => {
  const common = {
    group: 'test.kubebus.dev',
    version: 'v1',
    scope: 'Namespaced',
    spec: z.object({}),
    status: z.object({}),
  } as const;
  assert.equal(defineResource({ ...common, kind: 'NetworkPolicy' }).plural, 'networkpolicies');
  assert.equal(defineResource({ ...common, kind: 'Person', plural: 'people' }).plural, 'people');
});
