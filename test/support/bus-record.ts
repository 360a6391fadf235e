// What the bus has recorded of one object: its outcomes (every reconcile),
// its dead letters and its revisions, read on a connection of their own, as
// `kubebus status`, `kubebus dlq list` and `kubebus replay` read them.
import { connectionOf, readDeadLettersOf, type NumberedLetter } from '@kubebus/cli/commands';
import {
  readOutcomes,
  readRevisions,
  type OutcomeRecord,
  type Revision,
} from '@kubebus/shared/bus';
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

/** The object's revisions on the bus (KUBEBUS_EVENTS), oldest first. */
export async function revisionsOf(
  natsEnv: Readonly<Record<string, string>>,
  key: ObjectKey,
): Promise<Revision[]> {
  const nc = await connect(connectionOf({}, natsEnv).options);
  try {
    return await readRevisions(nc, key);
  } finally {
    await nc.close();
  }
}
