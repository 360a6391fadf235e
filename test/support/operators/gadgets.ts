// A resource that grows a second version, and the operator that reconciles
// it, in three releases: release 1 knows only v1alpha1 (host and port side by
// side); release 2 adds v1 (an endpoint object, and a status address instead
// of a url), stores v1 and converts v1alpha1 objects through its webhook;
// release 3 drops v1alpha1. Each
// reconcile applies a ConfigMap saying which release reconciled the Gadget and
// where it points, as the storage version the release reconciles in says it.
import { defineOperator, defineResource, kinds } from 'kubebus';
import { z } from 'zod';

const GROUP = 'test.kubebus.dev';

const v1alpha1 = {
  spec: z.object({ host: z.string().min(1), port: z.int().min(1).max(65535).default(80) }),
  // an http URL: the v1 address is what follows the scheme (checkConversions found the loss without it)
  status: z.object({ url: z.string().regex(/^http:\/\//) }),
};

const v1 = {
  spec: z.object({
    endpoint: z.object({ host: z.string().min(1), port: z.int().min(1).max(65535).default(80) }),
  }),
  status: z.object({ address: z.string() }),
};

/** Release 1: one version, written as every single-version resource is. */
export const GadgetV1alpha1 = defineResource({
  group: GROUP,
  version: 'v1alpha1',
  kind: 'Gadget',
  scope: 'Namespaced',
  ...v1alpha1,
});

/** Release 3: v1alpha1 dropped, once every object is stored in v1. */
export const GadgetV1 = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'Gadget',
  scope: 'Namespaced',
  ...v1,
});

/** Release 2: v1 stored, v1alpha1 still served and converted. */
export const Gadget = defineResource({
  group: GROUP,
  kind: 'Gadget',
  scope: 'Namespaced',
  versions: { v1alpha1, v1 },
  storage: 'v1',
  convert: {
    v1alpha1: {
      toStorage: ({ spec, status }) => ({
        spec: { endpoint: { host: spec.host, port: spec.port } },
        ...(status.url === undefined
          ? {}
          : { status: { address: status.url.replace(/^http:\/\//, '') } }),
      }),
      fromStorage: ({ spec, status }) => ({
        spec: { host: spec.endpoint?.host, port: spec.endpoint?.port },
        ...(status.address === undefined ? {} : { status: { url: `http://${status.address}` } }),
      }),
    },
  },
});

export function gadgetOperatorV1() {
  return defineOperator({
    name: 'gadgets',
    for: GadgetV1alpha1,
    owns: [kinds.ConfigMap],
    partitions: 4,
    async reconcile(gadget, ctx) {
      const { host, port } = gadget.spec;
      await ctx.apply(kinds.ConfigMap, {
        metadata: {
          name: `${gadget.metadata.name}-gadget`,
          labels: { 'reconciled-by': 'release-1' },
        },
        data: { target: `${host}:${port}` },
      });
      return { status: { url: `http://${host}:${port}` } };
    },
  });
}

/** Releases 2 and 3: the same reconcile, in v1. */
export function gadgetOperatorV2(gadgets: typeof Gadget = Gadget) {
  return defineOperator({
    name: 'gadgets',
    for: gadgets,
    owns: [kinds.ConfigMap],
    partitions: 4,
    async reconcile(gadget, ctx) {
      const { host, port } = gadget.spec.endpoint; // the storage version, typed
      await ctx.apply(kinds.ConfigMap, {
        metadata: {
          name: `${gadget.metadata.name}-gadget`,
          labels: { 'reconciled-by': 'release-2' },
        },
        data: { target: `${host}:${port}` },
      });
      return { status: { address: `${host}:${port}` } };
    },
  });
}
