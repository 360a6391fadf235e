// A seeded bug: the operator trusts its memory of the status it returned over
// the status it reads, and counts a status behind that memory as a reset
// (status.resets). The status is the status writer's to write, after the
// reconcile returns: unperturbed it is milliseconds behind and the requeue a
// second later finds it written; with the status writer restarted between the
// intent and the write, the requeue reads the older status and counts a reset
// that never happened. Only status-restart finds it (the operator makes no
// writes of its own for intermediate to crash after, and owns nothing to read stale).
import { bannersOperator } from './banners.js';

export default bannersOperator('banner-memory', 'remembers-what-it-returned');
