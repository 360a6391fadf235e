// Correct: the page first, then the checkpoint that says it was written. A
// crash between the two redoes the page (idempotent) and then checkpoints.
import { greetingsOperator } from './greetings.js';

export default greetingsOperator('checkpointed', 'page-then-checkpoint');
