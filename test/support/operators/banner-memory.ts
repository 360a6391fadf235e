// Trusts its memory of the status it returned over the status it reads, and
// counts a status still behind that memory a second later as a reset
// (status.resets): it assumes the status writer is never a second behind.
// With the status writer restarted between the intent and the write, the
// requeue 1.5 s later read the older status and counted a reset that never
// happened — this suite's seeded bug for status-restart, until
// read-your-own-writes covered the status (ADR 0019): the reconcile now sees
// the status this process last intended, and it passes.
import { bannersOperator } from './banners.js';

export default bannersOperator('banner-memory', 'remembers-what-it-returned');
