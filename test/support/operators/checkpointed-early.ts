// A seeded bug (Sieve's intermediate-state class): the checkpoint is written
// before the work it records. A crash between the two leaves a checkpoint for
// a page never written; the restarted reconcile trusts it and skips the page.
// Unperturbed it behaves exactly like checkpointed.ts.
import { greetingsOperator } from './greetings.js';

export default greetingsOperator('checkpointed-early', 'checkpoint-then-page');
