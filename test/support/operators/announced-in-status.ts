// Remembers in the object's own status that it announced this generation.
// The status is the status writer's write, after the reconcile, so a
// reconcile on a bus behind the apiserver (a watcher lagging) reads the
// status from before — and, before read-your-own-writes covered the status
// (ADR 0019), announced again: it was this suite's seeded bug. The reconcile
// now sees the status this process last intended, and it passes every
// lagging schedule.
import { announcementOperator } from './announcements.js';

export default announcementOperator('announced-in-status', 'in-status');
