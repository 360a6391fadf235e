// The Tenant operator as it would be written without declaring what it
// grants: the same reconcile, no `rbac` — its generated RBAC lacks `bind`.
import { tenantAdmins } from './tenant-admins.js';

export default tenantAdmins('tenant-admins-unbound');
