import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { defineResource } from '@kubebus/shared/definition';
import { Thermostat } from '../testing/thermostat-fixture.js';
import { crdOf } from './crd.js';

type Version = ReturnType<typeof crdOf>['spec']['versions'][number];
const specOf = (version: Version | undefined) =>
  version?.schema.openAPIV3Schema.properties.spec as { properties: Record<string, unknown> };

describe('the CRD of a resource in several versions', () => {
  it('lists every version with its own schema, one of them stored', () => {
    const crd = crdOf(Thermostat);
    const [old, stored] = crd.spec.versions;
    assert.deepEqual(
      crd.spec.versions.map(({ name, served, storage }) => ({ name, served, storage })),
      [
        { name: 'v1alpha1', served: true, storage: false },
        { name: 'v1', served: true, storage: true },
      ],
    );
    assert.deepEqual(Object.keys(specOf(old).properties), ['celsius']);
    assert.deepEqual(Object.keys(specOf(stored).properties), ['target']);
    const status = stored?.schema.openAPIV3Schema.properties.status as {
      properties: Record<string, unknown>;
    };
    assert.deepEqual(Object.keys(status.properties).sort(), [
      'conditions',
      'current',
      'observedGeneration',
    ]);
    // the printer columns and status subresource are every version's
    for (const version of crd.spec.versions) {
      assert.deepEqual(version.subresources, { status: {} });
      assert.ok(version.additionalPrinterColumns.some((column) => column.name === 'Ready'));
    }
  });

  it("puts the definition's validations and printer columns on the storage version only, each version's own on it", () => {
    const Gauge = defineResource({
      group: 'test.kubebus.dev',
      kind: 'Gauge',
      scope: 'Namespaced',
      validations: [{ rule: 'self.spec.max >= self.spec.min', message: 'max below min' }],
      printerColumns: [{ name: 'Max', type: 'integer', jsonPath: '.spec.max' }],
      versions: {
        v1alpha1: {
          spec: z.object({ limit: z.int() }),
          status: z.object({}),
          validations: [{ rule: 'self.spec.limit >= 0', message: 'negative limit' }],
          printerColumns: [{ name: 'Limit', type: 'integer', jsonPath: '.spec.limit' }],
        },
        v1: { spec: z.object({ min: z.int(), max: z.int() }), status: z.object({}) },
      },
      storage: 'v1',
      convert: {
        v1alpha1: {
          toStorage: ({ spec }) => ({ spec: { min: 0, max: spec.limit } }),
          fromStorage: ({ spec }) => ({ spec: { limit: spec.max } }),
        },
      },
    });
    const [old, stored] = crdOf(Gauge).spec.versions;
    const rules = (version: Version | undefined) =>
      version?.schema.openAPIV3Schema['x-kubernetes-validations']?.map((rule) => rule.rule);
    const columns = (version: Version | undefined) =>
      version?.additionalPrinterColumns.map((column) => column.name);
    assert.deepEqual(rules(old), ['self.spec.limit >= 0']);
    assert.deepEqual(rules(stored), ['self.spec.max >= self.spec.min']);
    assert.deepEqual(columns(old), ['Limit', 'Ready', 'Reason', 'Age']);
    assert.deepEqual(columns(stored), ['Max', 'Ready', 'Reason', 'Age']);
  });

  it('is converted by the webhook at a URL with its CA', () => {
    const crd = crdOf(Thermostat, { url: 'https://127.0.0.1:9443/convert', caBundle: 'Q0E=' });
    assert.deepEqual(crd.spec.conversion, {
      strategy: 'Webhook',
      webhook: {
        conversionReviewVersions: ['v1'],
        clientConfig: { url: 'https://127.0.0.1:9443/convert', caBundle: 'Q0E=' },
      },
    });
    assert.equal(crd.metadata.annotations, undefined);
  });

  it('is converted by default through the generated Service, cert-manager injecting the CA', () => {
    const crd = crdOf(Thermostat);
    assert.deepEqual(crd.spec.conversion?.webhook.clientConfig, {
      service: {
        namespace: 'kubebus-system',
        name: 'thermostats-conversion',
        path: '/convert',
        port: 443,
      },
    });
    assert.deepEqual(crd.metadata.annotations, {
      'cert-manager.io/inject-ca-from': 'kubebus-system/thermostats-conversion',
    });
  });

  it('keeps a single-version resource as it was: one stored version, no conversion', () => {
    const Single = defineResource({
      group: 'test.kubebus.dev',
      version: 'v1beta1',
      kind: 'Single',
      scope: 'Cluster',
      spec: z.object({ size: z.int() }),
      status: z.object({}),
    });
    const crd = crdOf(Single);
    assert.equal(Single.version, 'v1beta1');
    assert.deepEqual(
      crd.spec.versions.map(({ name, served, storage }) => ({ name, served, storage })),
      [{ name: 'v1beta1', served: true, storage: true }],
    );
    assert.equal('conversion' in crd.spec, false);
    assert.equal('annotations' in crd.metadata, false);
  });

  it('marks a deprecated version and keeps an unserved one listed', () => {
    const Old = defineResource({
      group: 'test.kubebus.dev',
      kind: 'Old',
      scope: 'Namespaced',
      versions: {
        v1alpha1: { spec: z.object({}), status: z.object({}), served: false },
        v1beta1: { spec: z.object({}), status: z.object({}), deprecated: 'use v1' },
        v1: { spec: z.object({}), status: z.object({}) },
      },
      storage: 'v1',
      convert: {
        v1alpha1: { toStorage: (o) => o, fromStorage: (o) => o },
        v1beta1: { toStorage: (o) => o, fromStorage: (o) => o },
      },
    });
    const versions = crdOf(Old).spec.versions;
    assert.equal(versions[0]?.served, false);
    const deprecated = versions[1] as { deprecated?: boolean; deprecationWarning?: string };
    assert.deepEqual(
      { deprecated: deprecated.deprecated, warning: deprecated.deprecationWarning },
      { deprecated: true, warning: 'use v1' },
    );
    assert.equal(Old.version, 'v1');
  });

  it('refuses in one line a storage version that is not listed or a version without conversion', () => {
    const schemas = { spec: z.object({}), status: z.object({}) };
    assert.throws(
      () =>
        defineResource({
          group: 'test.kubebus.dev',
          kind: 'Bad',
          scope: 'Namespaced',
          versions: { v1: schemas },
          storage: 'v2' as 'v1',
          convert: {},
        }),
      /^TypeError: defineResource: storage "v2" must be one of the versions \(v1\)$/,
    );
    assert.throws(
      () =>
        defineResource({
          group: 'test.kubebus.dev',
          kind: 'Bad',
          scope: 'Namespaced',
          versions: { v1alpha1: schemas, v1: schemas },
          storage: 'v1',
          convert: {} as never,
        }),
      /version "v1alpha1" needs convert.v1alpha1/,
    );
  });
});
