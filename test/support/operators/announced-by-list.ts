// A seeded bug (Sieve's stale-read class, on a list): the operator remembers
// that it announced on a ConfigMap it owns, as announced.ts does, but finds
// it again by label (ctx.list). A list reads the bus as it stands, so a
// reconcile on a bus behind the apiserver (a watcher lagging) lists no
// marker and announces again. Unperturbed it behaves exactly like
// announced.ts.
import { announcementOperator } from './announcements.js';

export default announcementOperator('announced-by-list', 'on-a-configmap-listed');
