// Correct: the twin of banner-memory.ts that decides on the status it reads
// alone — a status behind its own last word is the status writer's lag.
import { bannersOperator } from './banners.js';

export default bannersOperator('banner', 'reads-the-status');
