// The versioned test operator with its work split into 8 partitions (release 1 has 4).
import { versionedOperator } from './versioned.js';

export default versionedOperator('8-partitions', 8);
