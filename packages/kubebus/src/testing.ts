// kubebus/testing, implemented: the repository's test bed (real servers on
// loopback) or an existing cluster, with an operator author's conveniences.
// Types: testing-api.ts. This entry is the test kit's main: the one place it
// reads the environment (KUBECONFIG, KUBEBUS_USE_EXISTING_CLUSTER, …).
import type {
  checkConversions as CheckConversions,
  perturbationTest as Perturbation,
  startTestEnvironment as Signature,
} from './testing-api.js';
import { startEnvironment } from './testing/environment.js';
import { conversionProperty } from './testing/conversion-property.js';

export type * from './testing-api.js';

export const startTestEnvironment: typeof Signature = (options) =>
  startEnvironment(options, process.env);

/** Runs its own local test bed (never an existing cluster: it crashes the operator). */
export const perturbationTest: typeof Perturbation = async (operator, options) =>
  (await import('./perturb/perturbation-test.js')).perturbationTest(operator, options);

export const checkConversions: typeof CheckConversions = (resource, options) => {
  conversionProperty(resource, options);
};
