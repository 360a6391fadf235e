// A seeded bug in a cluster-scoped operator (Sieve's intermediate-state
// class): the checkpoint is written before the quota page it records. A crash
// between the two leaves a checkpoint for a page never written; the restarted
// reconcile trusts it and skips the page. Unperturbed it behaves exactly like
// teams.ts.
import { teamsOperator } from './teams.js';

export default teamsOperator('teams-checkpoint-early', 'checkpoint-then-page');
