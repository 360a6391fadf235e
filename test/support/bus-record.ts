// What the bus has recorded of one object: its outcomes (every reconcile) and
// its dead letters, read on a connection of their own, as `kubebus status`
// and `kubebus dlq list` read them.
import { connectionOf, readDeadLettersOf, type NumberedLetter } from '@kubebus/cli/commands';
import { readOutcomes, type OutcomeRecord } from '@kubebus/shared/bus';
import type { ObjectKey } from '@kubebus/shared/kube';
import { connect } from '@nats-io/transport-node';

export async function busRecordOf(
  natsEnv: Readonly<Record<string, string>>,
  key: ObjectKey,
): Promise<{ outcomes: OutcomeRecord[]; deadLetters: NumberedLetter[] }> {
  const nc = await connect(connectionOf({}, natsEnv).options);
  try {
    return {
      outcomes: await readOutcomes(nc, key),
      deadLetters: await readDeadLettersOf(nc, key),
    };
  } finally {
    await nc.close();
  }
}
