// Release 2 of the versioned test operator: its ConfigMaps say v2.
import { versionedOperator } from './versioned.js';

export default versionedOperator('v2');
