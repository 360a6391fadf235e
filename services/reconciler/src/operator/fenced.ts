// Right before each write a reconcile makes: one it may no longer make (its
// partition's lease lost or no longer trusted, the process stopping) throws
// instead, so a zombie reconcile writes nothing more (ADR 0005).
import type { RuntimeContext } from '@kubebus/shared/definition';

export function fenced(runtime: Pick<RuntimeContext, 'signal' | 'fence'>): void {
  runtime.fence?.();
  runtime.signal.throwIfAborted();
}
