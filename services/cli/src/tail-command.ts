// `kubebus tail [resource[.group]]`: changes as they are published, one line
// each (one JSON object a line with -o json|yaml), until `signal` aborts.
import type { KubeClient } from '@kubebus/shared/kube';
import type { BusContext, CommandOutcome } from './command.js';
import { literalResource, requireResource } from './resolve-resource.js';
import { tail, tailSubject, formatTailLine } from './tail.js';
import { UsageError } from './usage-error.js';

export interface TailOptions {
  /** a kind, plural, singular or short name, optionally .group; undefined: every resource */
  readonly resource?: string | undefined;
  readonly namespace?: string | undefined;
  readonly name?: string | undefined;
  /** Ctrl-C */
  readonly signal: AbortSignal;
}

export async function tailCommand(
  options: TailOptions,
  context: BusContext,
): Promise<CommandOutcome> {
  const resource =
    options.resource === undefined ? undefined : await resourceOf(context.kube, options.resource);
  const filter = {
    ...(resource ?? {}),
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
    ...(options.name === undefined ? {} : { name: options.name }),
  };
  context.stderr.write(`following ${tailSubject(filter)} (Ctrl-C stops)\n`);
  await tail(
    context.nc,
    filter,
    (line) =>
      context.stdout.write(
        `${context.format === 'table' ? formatTailLine(line) : JSON.stringify(line)}\n`,
      ),
    options.signal,
  );
  return 'ok';
}

/** As status and history resolve it: through discovery when a kubeconfig is at hand. */
async function resourceOf(
  kube: KubeClient | undefined,
  text: string,
): Promise<{ resource: string; group: string }> {
  if (kube === undefined) return literalResource(text);
  try {
    const { resource, group } = await requireResource(kube, text);
    return { resource, group };
  } catch (error) {
    if (error instanceof UsageError) throw error;
    // an apiserver that does not answer (or forbids discovery) leaves the name as typed:
    // tail needs only NATS
    return literalResource(text);
  }
}
