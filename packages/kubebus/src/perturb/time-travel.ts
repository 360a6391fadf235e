// The stale perturbation's time travel: the bus' record of one object taken
// back to an earlier revision by removing the later ones from KUBEBUS_EVENTS.
// That is what a bus behind the apiserver looks like to a reconcile (a
// watcher that has not published yet, a stream replica catching up): the
// older revision is the last record, in the stream's own order. Re-publishing
// the old revision instead would put it after the newer ones — an order the
// watcher never produces. The next change of the object brings the record
// up to date again, as it would.
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { connectionOf } from '@kubebus/cli/commands';
import { Streams, subjects } from '@kubebus/shared/bus';
import { EventTypes, decodeNatsMessage } from '@kubebus/shared/events';
import type { ObjectKey } from '@kubebus/shared/runtime';

/** What `recorded` waits for when the object is not on the apiserver. */
export const GONE = 'gone';

/** How long the bus may take to record the apiserver's revision before the travel. */
const RECORDED_WITHIN_MS = 10_000;

export class BusTimeTravel {
  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
  ) {}

  /** Connects as a kubebus client with these variables would (the test environment's natsEnv). */
  static async connect(natsEnv: Readonly<Record<string, string>>): Promise<BusTimeTravel> {
    const nc = await connect(connectionOf({}, natsEnv).options);
    try {
      return new BusTimeTravel(nc, await jetstreamManager(nc));
    } catch (error) {
      await nc.close();
      throw error;
    }
  }

  /** The connection it travels on (the driver's other hands on the bus share it). */
  get connection(): NatsConnection {
    return this.nc;
  }

  /** The last sequence of KUBEBUS_EVENTS: a point in time to travel back to. */
  async now(): Promise<number> {
    return (await this.jsm.streams.info(Streams.events)).state.last_seq;
  }

  /** How many messages KUBEBUS_STATUS has stored: the status intents that went through the bus. */
  async statusIntentsStored(): Promise<number> {
    return (await this.jsm.streams.info(Streams.status)).state.last_seq;
  }

  /**
   * Takes the object's record back to the last one at or before `to`; answers
   * how many revisions were taken out (0: it did not change since). Waits
   * first for the bus to record `current` (the apiserver's resourceVersion):
   * a revision recorded after the travel would undo it.
   */
  async travelBack(key: ObjectKey, to: number, current: string | undefined): Promise<number> {
    const last = this.#lastOf(key);
    if (current !== undefined) await this.recorded(key, current, RECORDED_WITHIN_MS);
    let removed = 0;
    for (;;) {
      const stored = await last();
      if (stored === undefined || stored.seq <= to) return removed;
      await this.jsm.streams.deleteMessage(Streams.events, stored.seq, false);
      removed++;
    }
  }

  /**
   * Whether the bus' last record of the object is the apiserver's `current`
   * (a resourceVersion, or `gone`: its deletion, or no record) within `ms`.
   */
  async recorded(key: ObjectKey, current: string, ms: number): Promise<boolean> {
    const last = this.#lastOf(key);
    const deadline = Date.now() + ms;
    for (;;) {
      const stored = await last();
      const decoded =
        stored === undefined ? undefined : decodeNatsMessage(stored.data, stored.header);
      if (
        current === GONE
          ? stored === undefined ||
            (decoded?.ok === true && decoded.event.type === EventTypes.delete)
          : decoded?.ok === true && decoded.event.kbrv === current
      )
        return true;
      if (Date.now() > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  #lastOf(key: ObjectKey) {
    const subject = subjects.event(key);
    return async () =>
      (await this.jsm.streams.getMessage(Streams.events, { last_by_subj: subject })) ?? undefined;
  }

  async close(): Promise<void> {
    await this.nc.close();
  }
}
