// Whether a stream has replicas that could answer a direct get behind its
// leader. With one replica the leader is the only server that holds the
// stream, so a direct get reads what a leader read would, at a third of
// nats-server's cost (no JetStream API request, no base64 JSON answer). The
// answer is refreshed in the background: a stream scaled up while processes
// run goes back to leader reads within the refresh period (ADR 0023).
import type { JetStreamManager } from '@nats-io/jetstream';

const REFRESH_MS = 30_000;

export class StreamReplicas {
  /** unknown until the first answer, or after a failed one: leader reads, the safe side */
  #single = false;
  #checkedAt = Number.NEGATIVE_INFINITY;
  #checking: Promise<void> | undefined;

  constructor(
    private readonly jsm: JetStreamManager,
    private readonly stream: string,
    private readonly refreshMs = REFRESH_MS,
  ) {}

  /** One replica, as last checked; the first call waits for the check. */
  async single(): Promise<boolean> {
    if (this.#checkedAt === Number.NEGATIVE_INFINITY) await this.#check();
    else if (Date.now() - this.#checkedAt >= this.refreshMs) void this.#check();
    return this.#single;
  }

  #check(): Promise<void> {
    this.#checking ??= this.jsm.streams
      .info(this.stream)
      .then(
        (info) => {
          this.#single = info.config.num_replicas <= 1;
        },
        () => {
          this.#single = false;
        },
      )
      .finally(() => {
        this.#checkedAt = Date.now();
        this.#checking = undefined;
      });
    return this.#checking;
  }
}
