// A `watches` map names a primary from a label of the changed object. An
// object relabelled from one primary to another leaves the first one's status
// and joins the second's; unlabelled, it leaves the second's: the watcher maps
// the object's previous state as well as its new one, as controller-runtime's
// EnqueueRequestsFromMapFunc maps the old and the new object of an update.
// And `kubebus replay` gives each revision's reconcile the list it read then.
import { startTestEnvironment, type TestEnvironment } from 'kubebus/testing';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { kubebusCli } from '../support/kubebus-cli.js';
import listings, { LABEL, Listing, reconciles } from '../support/operators/listings.js';
import { untilQuiet, waitFor } from '../support/wait.js';

const OPERATOR_FILE = fileURLToPath(new URL('../support/operators/listings.ts', import.meta.url));

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
  const member = (labels: Record<string, string>, name = 'web') =>
    env.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels } });
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

  it('replays what ctx.list read as of each revision, not as the apiserver has it today', async () => {
    await member({ [LABEL]: 'rp' }, 'first');
    await listing('rp');
    await showing('rp', ['first']);
    await quiet('rp');
    // a member since: today's list names both, what the first revisions read named one
    await member({ [LABEL]: 'rp' }, 'second');
    await showing('rp', ['first', 'second']);
    await quiet('rp');
    const result = await kubebusCli(['replay', OPERATOR_FILE, 'default/rp'], {
      ...env.natsEnv,
      KUBECONFIG: env.kubeconfigPath,
    });
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
    assert.doesNotMatch(result.stdout, /status differs/);
    assert.match(result.stdout, /: status same as recorded$/m);
  });
});
