// For the unit tests of `ctx` (operator-context.ts): a small operator, an
// object of its resource, and the context a reconcile of it gets, with a
// client the test fakes and nothing else behind it.
import { z } from 'zod';
import {
  defineOperator,
  defineResource,
  kinds,
  type RuntimeContext,
} from '@kubebus/shared/definition';
import type { KubeObject } from '@kubebus/shared/events';
import type { EventRecorder, KubeClient } from '@kubebus/shared/kube';
import type { InFlightCalls } from './in-flight-calls.js';
import { KnownResources } from './known-resources.js';
import { operatorContext } from './operator-context.js';

export const Site = defineResource({
  group: 'sites.example.com',
  version: 'v1',
  kind: 'Site',
  scope: 'Namespaced',
  spec: z.object({}),
  status: z.object({}),
});

export const siteOperator = defineOperator({
  name: 'sites',
  for: Site,
  owns: [kinds.ConfigMap],
  reconcile: () => Promise.resolve(undefined),
});

export const site: KubeObject = {
  apiVersion: 'sites.example.com/v1',
  kind: 'Site',
  metadata: { name: 's', namespace: 'ns', uid: 'u1', resourceVersion: '5', generation: 1 },
};

/** The ctx of a reconcile of `site`: the bus knows nothing, the client is the test's. */
export function siteContext(
  client: KubeClient,
  signal: AbortSignal,
  extra: {
    readonly events?: EventRecorder;
    readonly calls?: InFlightCalls;
    /** as `kubebus replay` runs it */
    readonly dryRun?: boolean;
  } = {},
) {
  const runtime: RuntimeContext = {
    signal,
    log: undefined as never,
    reconcileId: 'r',
    traceparent: '',
    attempt: 1,
  };
  return operatorContext(
    {
      operator: siteOperator,
      known: new KnownResources(siteOperator),
      reader: { read: () => Promise.resolve(undefined) },
      client,
      applied: undefined as never,
      fieldManager: 'sites',
      instance: 'i',
      dryRun: extra.dryRun ?? false,
      deps: undefined,
      lister: { list: () => Promise.resolve([]) },
      storage: undefined as never,
      touched: new Set(),
      ...extra,
    },
    site,
    runtime,
  );
}
