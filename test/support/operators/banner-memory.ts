// A seeded bug: the operator trusts its memory of the status it returned over
// the status it reads, and counts a status still behind that memory a second
// later as a reset (status.resets) — it assumes the status writer is never a
// second behind. Unperturbed the writer is milliseconds behind, and a restart
// of the operator's roles (an unobserved window) restarts the writer before
// the reconciler; with the status writer restarted between the intent and the
// write, the requeue 1.5 s later reads the older status and counts a reset
// that never happened. Only status-restart finds it (the operator makes no
// writes of its own for intermediate to crash after, and owns nothing to read stale).
import { bannersOperator } from './banners.js';

export default bannersOperator('banner-memory', 'remembers-what-it-returned');
