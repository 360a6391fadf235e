// Correct: a scale-down removes every member past the new size that still
// exists (the level), however many changes it was seen as.
import { ensembleOperator } from './ensembles.js';

export default ensembleOperator('ensemble', 'removes-every-member-past-the-size');
