// Answered requests end without an Error built and dropped, on a real
// nats-server; requests that fail still fail as nats-core says.
import type { NatsConnection } from '@nats-io/nats-core';
import { jetstreamManager, jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { quietReplies } from '../../shared/src/bus/quiet-replies.js';
import { standaloneNats, type StandaloneNats } from '../support/standalone-nats.js';

/** nats-core's errors module, the instance its requests build errors from. */
const errorsModule = createRequire(import.meta.url)(
  join(dirname(createRequire(import.meta.url).resolve('@nats-io/nats-core')), 'errors.js'),
) as { RequestError: new (...args: unknown[]) => Error; errors: { RequestError: unknown } };

/** Counts the RequestErrors nats-core builds while `run` runs. */
async function requestErrorsBuiltBy(run: () => Promise<unknown>): Promise<number> {
  const original = errorsModule.RequestError;
  const originalInErrors = errorsModule.errors.RequestError;
  let built = 0;
  class Counted extends original {
    constructor(...args: unknown[]) {
      super(...args);
      built++;
    }
  }
  errorsModule.RequestError = Counted;
  errorsModule.errors.RequestError = Counted;
  try {
    await run();
  } finally {
    errorsModule.RequestError = original;
    errorsModule.errors.RequestError = originalInErrors;
  }
  return built;
}

function pendingRequests(nc: NatsConnection): number {
  return (
    nc as unknown as { protocol: { muxSubscriptions: { size(): number } } }
  ).protocol.muxSubscriptions.size();
}

describe('answered NATS requests end quietly', { timeout: 60_000 }, () => {
  let nats: StandaloneNats;
  const connections: NatsConnection[] = [];

  before(async () => {
    nats = await standaloneNats('quiet-replies');
    nats.nc.subscribe('echo', {
      callback: (_error, message) => {
        message.respond(message.data);
      },
    });
    nats.nc.subscribe('silent', { callback: () => undefined });
    await nats.nc.flush();
  });

  after(async () => {
    for (const nc of connections) await nc.close();
    await nats.stop();
  });

  async function connection(quiet: boolean): Promise<NatsConnection> {
    const nc = await connect({ servers: nats.url, noAsyncTraces: true });
    connections.push(nc);
    if (quiet) assert.equal(quietReplies(nc), true, 'nats-core internals as expected');
    return nc;
  }

  const fifty = (nc: NatsConnection) =>
    Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const answer = await nc.request('echo', `ping ${i}`, { timeout: 10_000 });
        assert.equal(answer.string(), `ping ${i}`);
      }),
    );

  it('builds no error for an answered request, where nats-core builds one each', async () => {
    const plain = await connection(false);
    assert.equal(await requestErrorsBuiltBy(() => fifty(plain)), 50);
    const quiet = await connection(true);
    assert.equal(await requestErrorsBuiltBy(() => fifty(quiet)), 0);
    assert.equal(pendingRequests(quiet), 0, 'every answered request left the mux');
  });

  it('patches a connection once', async () => {
    const nc = await connection(true);
    assert.equal(quietReplies(nc), true);
    assert.equal(await requestErrorsBuiltBy(() => fifty(nc)), 0);
  });

  it('still fails a request nobody answers, and one answered too late', async () => {
    const nc = await connection(true);
    await assert.rejects(
      nc.request('nobody.here', 'x', { timeout: 5_000 }),
      (error: Error & { isNoResponders?: () => boolean }) => error.isNoResponders?.() === true,
    );
    await assert.rejects(nc.request('silent', 'x', { timeout: 200 }), { name: 'TimeoutError' });
    assert.equal(pendingRequests(nc), 0, 'failed requests left the mux');
  });

  it('carries JetStream publishes and their acknowledgements', async () => {
    const nc = await connection(true);
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'QUIET', subjects: ['quiet.>'] });
    const js = jetstream(nc);
    const built = await requestErrorsBuiltBy(async () => {
      for (let i = 1; i <= 20; i++) assert.equal((await js.publish('quiet.x', `${i}`)).seq, i);
    });
    assert.equal(built, 0);
    assert.equal((await jsm.streams.info('QUIET')).state.messages, 20);
  });
});
