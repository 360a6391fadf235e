// A seeded bug (a change seen only as an update event): the old user's Secret
// is that of the user this process saw last. Unperturbed, one process sees
// every change and it behaves exactly like login.ts; stopped while the user
// went back and then changed again, it starts knowing no old user, and the
// Secret of the first change stays.
import { loginOperator } from './logins.js';

export default loginOperator('login-remembered', 'the-user-it-saw-before');
