// kubebus/testing, implemented: the repository's test bed (real servers on
// loopback) with an operator author's conveniences. Types: testing-api.ts.
import type { startTestEnvironment as Signature } from './testing-api.js';
import { startEnvironment } from './testing/environment.js';

export type * from './testing-api.js';

export const startTestEnvironment: typeof Signature = startEnvironment;
