// Correct: the Secrets of other users are found by what exists (the Login's
// Secrets, by label), not by what a process remembers having seen.
import { loginOperator } from './logins.js';

export default loginOperator('login', 'every-other-users-secret');
