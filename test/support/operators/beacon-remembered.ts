// Remembers in its status: it deletes the colour its status says it showed
// last. Right one reconcile at a time; under `overlap` it relies on the
// runtime showing the next reconcile the status its pending (and by then
// stale, never written) intent makes: without that, the colour the paused
// reconcile put up is left behind (beacons.ts).
import { beaconOperator } from './beacons.js';

export default beaconOperator('beacon-remembered', 'deleted-as-the-status-remembers');
