// The connections operator without its watch of the Secret a Connection names:
// it reads the password on every reconcile, but a new one reaches the status
// only with the next reconcile that happens to come. `kubebus test` with a
// revision of that Secret among the samples says so.
import { connectionsOperator } from './connections.js';

export default connectionsOperator(16, { watchesSecret: false });
