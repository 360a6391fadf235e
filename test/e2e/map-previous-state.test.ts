// A `watches` map names a primary from a label of the changed object. An
// object relabelled from one primary to another leaves the first one's status
// and joins the second's; unlabelled, it leaves the second's: the watcher maps
// the object's previous state as well as its new one, as controller-runtime's
// EnqueueRequestsFromMapFunc maps the old and the new object of an update.
import { defineOperator, defineResource, kinds } from 'kubebus';
import { startTestEnvironment, type TestEnvironment } from 'kubebus/testing';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { untilQuiet, waitFor } from '../support/wait.js';

const LABEL = 'test.kubebus.dev/listing';

const Listing = defineResource({
  group: 'test.kubebus.dev',
  version: 'v1',
  kind: 'Listing',
  scope: 'Namespaced',
  spec: z.object({}),
  status: z.object({ members: z.array(z.string()) }).partial(),
});

/** Reconciles per Listing: a quiet one no longer has one under way that would list again. */
const reconciles = new Map<string, number>();

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

describe('a watches map and the state an object leaves', { timeout: 300_000 }, () => {
  let env: TestEnvironment;

  before(async () => {
    env = await startTestEnvironment();
    await env.install(Listing);
    await env.run(listings);
  });
  after(() => env?.stop());

  const listing = (name: string) =>
    env.apply({
      apiVersion: 'test.kubebus.dev/v1',
      kind: 'Listing',
      metadata: { name },
      spec: {},
    });
  const member = (labels: Record<string, string>) =>
    env.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web', labels } });
  const membersOf = async (name: string) => (await env.get(Listing, name))?.status?.members;
  const showing = (name: string, members: string[]) =>
    waitFor(
      async () => {
        assert.deepEqual(await membersOf(name), members);
        return true;
      },
      `${name}'s status to list [${members.join(', ')}]`,
      60_000,
    );
  /** No reconcile of these for a while: what each lists next, only a mark makes it. */
  const quiet = (...names: string[]) =>
    untilQuiet(
      () => names.map((name) => reconciles.get(name) ?? 0).join(','),
      `${names.join(', ')} to stop reconciling`,
      3_000,
    );

  it('takes a relabelled object off the primary it named before, and an unlabelled one off its last', async () => {
    await listing('ca');
    await listing('cb');
    await member({ [LABEL]: 'ca' });
    await showing('ca', ['web']);
    await showing('cb', []);
    await quiet('ca', 'cb');

    await member({ [LABEL]: 'cb' });
    await showing('cb', ['web']);
    await showing('ca', []);
    await quiet('ca', 'cb');

    await member({});
    await showing('cb', []);
    assert.deepEqual(await membersOf('ca'), []);
  });
});
