// One real nats-server in a temporary directory, with a connection to it:
// what an integration test of the bus alone starts before its cases and stops
// after them; and the streams such a test declares itself.
import { Streams, subjects } from '@kubebus/shared/bus';
import { DiscardPolicy, RetentionPolicy, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { natsConfig, natsUrl, startNats, type NatsConfig } from '../bed/nats.js';

export interface StandaloneNats {
  readonly config: NatsConfig;
  readonly url: string;
  readonly nc: NatsConnection;
  /** closes the connection, stops the server and removes its directory */
  stop(): Promise<void>;
}

export async function standaloneNats(name: string): Promise<StandaloneNats> {
  const dir = mkdtempSync(join(tmpdir(), `kubebus-${name}-`));
  const config = await natsConfig(dir);
  const server = await startNats(config);
  const url = natsUrl(config);
  const nc = await connect({ servers: url });
  return {
    config,
    url,
    nc,
    async stop() {
      await nc.close();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** KUBEBUS_STATUS as topology.ts makes it: a work queue, one pending intent per object, read directly. */
export async function addStatusStream(jsm: JetStreamManager): Promise<void> {
  await jsm.streams.add({
    name: Streams.status,
    subjects: [subjects.allStatus],
    num_replicas: 1,
    retention: RetentionPolicy.Workqueue,
    max_msgs_per_subject: 1,
    discard: DiscardPolicy.New,
    allow_direct: true,
  });
}
