// The connections operator's next version, for replay: its fingerprint is
// shorter, so every status it computes differs from what the first recorded.
import { connectionsOperator } from './connections.js';

export default connectionsOperator(12);
