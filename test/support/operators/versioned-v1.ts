// Release 1 of the versioned test operator.
import { versionedOperator } from './versioned.js';

export default versionedOperator('v1');
