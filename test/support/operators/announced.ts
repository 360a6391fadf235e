// Correct: the announcement is remembered on a ConfigMap the operator owns
// and reads back by name (ctx.get), so a reconcile never reads an older
// marker than the one it wrote last (read-your-own-writes), and passes every
// lagging schedule.
import { announcementOperator } from './announcements.js';

export default announcementOperator('announced', 'on-a-configmap');
