// Correct: the journal is read back by name (ctx.get), so a reconcile never
// reads an older journal than the one it wrote last (read-your-own-writes),
// and passes every stale schedule.
import { journalOperator } from './journal.js';

export default journalOperator('journaled', 'by-name');
