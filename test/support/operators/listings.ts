// A Listing's status names the ConfigMaps labelled with its name, as ctx.list
// reads them (test/e2e/map-previous-state.test.ts): a `watches` map names the
// primary from the label, of the object's previous state too.
import { defineOperator, defineResource, kinds } from 'kubebus';
import { z } from 'zod';

export const LABEL = 'test.kubebus.dev/listing';

export const Listing = defineResource({
  group: 'test.kubebus.dev',
  version: 'v1',
  kind: 'Listing',
  scope: 'Namespaced',
  spec: z.object({}),
  status: z.object({ members: z.array(z.string()) }).partial(),
});

/** Reconciles per Listing: a quiet one no longer has one under way that would list again. */
export const reconciles = new Map<string, number>();

const listings = defineOperator({
  name: 'listings',
  for: Listing,
  watches: [
    {
      resource: kinds.ConfigMap,
      map: (configMap) => {
        const name = configMap.metadata.labels?.[LABEL];
        return name === undefined ? [] : [{ name }];
      },
    },
  ],
  async reconcile(listing, ctx) {
    const { name } = listing.metadata;
    reconciles.set(name, (reconciles.get(name) ?? 0) + 1);
    const members = await ctx.list(kinds.ConfigMap, { labelSelector: `${LABEL}=${name}` });
    return { status: { members: members.map((member) => member.metadata.name).sort() } };
  },
});

export default listings;
