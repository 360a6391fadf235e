// A seeded bug (Sieve's stale-read class, on the primary itself): the
// operator remembers in the object's own status that it announced this
// generation. The status is written by the status writer after the
// reconcile, so a reconcile on a bus behind the apiserver (a watcher
// lagging) reads the status from before and announces again. Unperturbed it
// behaves exactly like announced.ts.
import { announcementOperator } from './announcements.js';

export default announcementOperator('announced-in-status', 'in-status');
