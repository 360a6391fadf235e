// Where a failure came from decides how its outage shows. kubebus' own
// clients (the apiserver's, NATS') fail with socket errors and timeouts when
// the cluster's dependencies are down: nobody's fault, waited out quietly for
// as long as it takes. The same shapes from an operator's own code — its
// fetch to an outside API refused or timing out — are that system's outage
// (failure-class.ts `external`): still retried without limit, never
// dead-lettered, but each try counts and shows on the object (Warnings at
// the 2nd, 4th, 8th attempt). Without the mark they were retried invisibly.
const fromKubebus = new WeakSet<object>();
const fromOperator = new WeakSet<object>();

const isObject = (value: unknown): value is object =>
  (typeof value === 'object' && value !== null) || typeof value === 'function';

function* chainOf(error: object): Generator<object> {
  let e: unknown = error;
  for (let depth = 0; isObject(e) && depth < 8; depth++) {
    yield e;
    e = (e as { cause?: unknown }).cause;
  }
}

/** An error a ctx call rejected with (kubebus' own clients), unless the operator's code threw it inside the call. */
export function markKubebusError<E>(error: E): E {
  if (isObject(error) && !fromOperator.has(error)) fromKubebus.add(error);
  return error;
}

/**
 * An error that escaped the operator's own code (reconcile, finalize, a
 * ctx.once perform or done): its own, unless a ctx call's error is among its
 * causes (rethrown or wrapped, it stays kubebus').
 */
export function markOperatorError<E>(error: E): E {
  if (isObject(error) && ![...chainOf(error)].some((e) => fromKubebus.has(e)))
    fromOperator.add(error);
  return error;
}

/** Whether the operator's own code threw it, from no ctx call. */
export function isOperatorError(error: unknown): boolean {
  return isObject(error) && fromOperator.has(error);
}
