// Correct: the old colour goes with the runtime's pruning (what this
// reconcile did not apply of what the Beacon owns), however many changes
// came while a reconcile ran.
import { beaconOperator } from './beacons.js';

export default beaconOperator('beacon', 'pruned');
