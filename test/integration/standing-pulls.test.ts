// A partition's consumer on a real nats-server: one pull asks for more than
// the consumer's max_ack_pending and stands, so nats.js does not pull again
// after every message, while max_ack_pending still bounds what is delivered
// and not yet answered; every message arrives once and is acked once.
import { PartitionConsumers } from '@kubebus/shared/bus';
import { createLogger } from '@kubebus/shared/obs';
import type { WorkItem } from '@kubebus/shared/runtime';
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { standaloneNats, type StandaloneNats } from '../support/standalone-nats.js';
import { waitFor } from '../support/wait.js';

const MESSAGES = 200;
const MAX_ACK_PENDING = 2;

describe('a partition consumer', { timeout: 120_000 }, () => {
  let nats: StandaloneNats;

  before(async () => {
    nats = await standaloneNats('standing-pulls');
  });

  after(() => nats.stop());

  it('pulls far less often than once per message, within max_ack_pending', async () => {
    const { nc } = nats;
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'PULLS', subjects: ['pulls.>'] });
    await jsm.consumers.add('PULLS', {
      durable_name: 'pulls-0',
      ack_policy: AckPolicy.Explicit,
      max_ack_pending: MAX_ACK_PENDING,
      filter_subject: 'pulls.0.>',
    });
    let pulls = 0;
    const tap = nc.subscribe('$JS.API.CONSUMER.MSG.NEXT.PULLS.pulls-0', {
      callback: () => {
        pulls++;
      },
    });
    const seen = new Map<string, number>();
    let unanswered = 0;
    let mostUnanswered = 0;
    const settle = (item: WorkItem) => {
      setTimeout(() => {
        unanswered--;
        item.ack();
      }, 1);
    };
    const consumers = new PartitionConsumers(jetstream(nc), {
      stream: 'PULLS',
      durable: (partition) => `pulls-${String(partition)}`,
      filterOf: (partition) => `pulls.${String(partition)}.>`,
      parse: (message) => ({
        ok: true,
        key: { group: '', resource: 'configmaps', namespace: 'ns', name: message.string() },
      }),
      dispatch: (item) => {
        seen.set(item.key.name, (seen.get(item.key.name) ?? 0) + 1);
        mostUnanswered = Math.max(mostUnanswered, ++unanswered);
        settle(item);
      },
      onMalformed: () => Promise.resolve(),
      log: createLogger({ service: 'standing-pulls-test', level: 'silent' }),
    });
    await consumers.start(0);
    const js = jetstream(nc);
    for (let i = 0; i < MESSAGES; i++) await js.publish(`pulls.0.m${String(i)}`, `m${String(i)}`);
    await waitFor(async () => {
      const info = await jsm.consumers.info('PULLS', 'pulls-0');
      return info.ack_floor.stream_seq === MESSAGES && info.num_ack_pending === 0;
    }, 'every message acked');
    await consumers.stopAll();
    await nc.flush();
    tap.unsubscribe();
    assert.equal(seen.size, MESSAGES);
    assert.ok(
      [...seen.values()].every((times) => times === 1),
      'each delivered once',
    );
    assert.ok(mostUnanswered <= MAX_ACK_PENDING, `at most ${String(mostUnanswered)} unanswered`);
    assert.ok(pulls <= MESSAGES / 10, `${String(pulls)} pulls for ${String(MESSAGES)} messages`);
  });
});
