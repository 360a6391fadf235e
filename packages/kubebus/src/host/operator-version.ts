// Which version of an operator a process runs, so a new one can tell that it
// is new (the upgrade sweep, shared/src/bus/upgrade-sweep.ts): the
// KUBEBUS_OPERATOR_VERSION the deployment sets (an image tag, say), else a
// hash of the module's bytes and of its reconcile and finalize functions (of
// the functions alone where no file is run: the test kit). A bundled module
// (an image's dist/) holds all its code; a .ts module that imports helpers
// from other files changes version only with its own file, hence the variable.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Operator } from '@kubebus/shared/definition';

export function operatorVersionOf(
  file: string | undefined,
  operator: Operator,
  explicit: string | undefined,
): string {
  if (explicit !== undefined && explicit.trim() !== '') return explicit.trim();
  const hash = createHash('sha256');
  if (file !== undefined) hash.update(readFileSync(file));
  // the functions' source text, not their values: nothing is called
  const { reconcile, finalize } = operator as unknown as {
    reconcile: () => unknown;
    finalize?: () => unknown;
  };
  hash.update(Function.prototype.toString.call(reconcile));
  if (finalize !== undefined) hash.update(Function.prototype.toString.call(finalize));
  return `sha256-${hash.digest('hex').slice(0, 16)}`;
}
