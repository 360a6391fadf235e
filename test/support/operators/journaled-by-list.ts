// Seeded bug: the journal is found by its label (ctx.list). A list is read
// from the bus as it stands, older than the operator's own last write when
// the bus is behind: the stale schedule `stale:s1:ConfigMap/sample-journal`
// shows the reconcile an empty journal, and the first entry is lost.
import { journalOperator } from './journal.js';

export default journalOperator('journaled-by-list', 'by-label');
