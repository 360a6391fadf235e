// A seeded bug (a coalesced scale-down): it removes only the member just past
// the new size, as if every scale-down came as a change of its own. Run with
// ensemble-samples.yaml (2, 3, 1 members) it passes unperturbed; 3 → 2 → 1
// seen as 3 → 1 leaves the third member's identity behind.
import { ensembleOperator } from './ensembles.js';

export default ensembleOperator('ensemble-shrunk-by-one', 'removes-the-member-that-left');
