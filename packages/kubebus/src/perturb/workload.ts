// The workload every run replays: one object, created, changed back and forth
// between specs, deleted, created again under the same name and deleted. The
// specs are the user's samples first, then specs generated from the zod
// schema (a typical one and both boundaries), deterministic from the seed.
// A fixture given more than once in the samples changes while the object
// lives: each later document is a step of its own, before the first delete.
import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import type { CustomResource } from '@kubebus/shared/definition';
import type { Sample } from './report.js';
import { fixtureName, splitSamples, type Fixture, type FixtureRevision } from './fixtures.js';
import { inPlace, placeOf } from './place.js';
import { boundarySpec, specArbitrary } from './spec-arbitrary.js';
import { WorkloadError } from './workload-error.js';

export type Step =
  | { readonly action: 'apply'; readonly spec: unknown; readonly why: string }
  | { readonly action: 'delete'; readonly why: string }
  /** a fixture's next revision applied: the object itself is not changed */
  | { readonly action: 'fixture'; readonly fixture: Fixture; readonly why: string };

export interface Workload {
  /** the object's name (the first sample's, else "sample") */
  readonly name: string;
  readonly specs: readonly unknown[];
  readonly steps: readonly Step[];
  /** objects of other kinds among the samples, made in each run's place first (fixtures.ts) */
  readonly fixtures: readonly Fixture[];
}

export { WorkloadError };

function specOfSample(sample: Sample): unknown {
  return 'spec' in sample ? ((sample as { spec?: unknown }).spec ?? {}) : sample;
}

/** How many generated specs are drawn to find valid ones (refinements reject some). */
const DRAWS = 60;

export function workloadOf(
  primary: CustomResource,
  options: { readonly samples?: readonly Sample[]; readonly seed: number },
): Workload {
  const schema = primary.definition.spec;
  const { samples, fixtures, revisions } = splitSamples(primary, options.samples ?? []);
  const first = samples[0] as { metadata?: { name?: string } } | undefined;
  const name = first?.metadata?.name ?? 'sample';
  // a sample's `<name>` and `<namespace>` are each run's own (placeOf): judged as a run's
  const asInARun = (spec: unknown) => inPlace(placeOf(primary, 'kbt-0', name), spec);
  const valid: unknown[] = [];
  const add = (spec: unknown) => {
    if (
      schema.safeParse(asInARun(spec)).success &&
      !valid.some((known) => isDeepStrictEqual(known, spec))
    )
      valid.push(spec);
  };
  for (const [index, sample] of samples.entries()) {
    const spec = specOfSample(sample);
    const parsed = schema.safeParse(asInARun(spec));
    if (!parsed.success)
      throw new WorkloadError(
        `sample ${index + 1} has a spec its schema rejects (${parsed.error.issues[0]?.message ?? 'invalid'}): fix the sample`,
      );
    add(spec);
  }
  let generationProblem: string | undefined;
  try {
    // a typical spec (unless a sample is one), both boundaries, then more typical ones
    // in place of boundaries the refinements reject
    const drawn = fc.sample(specArbitrary(schema), { seed: options.seed, numRuns: DRAWS });
    for (const spec of drawn) if (valid.length < 1) add(spec);
    add(boundarySpec(schema, 'low', options.seed));
    add(boundarySpec(schema, 'high', options.seed));
    for (const spec of drawn) if (valid.length < 3) add(spec);
  } catch (error) {
    generationProblem = (error as Error).message;
  }
  if (valid.length === 0)
    throw new WorkloadError(
      generationProblem ??
        `no generated spec of ${primary.kind} passes its schema's refinements: give sample objects (--samples file.yaml)`,
    );
  return { name, specs: valid, steps: stepsOf(valid, revisions), fixtures };
}

/**
 * Whether an overlap schedule applies at step `index`: the step keeps the
 * object and the next one changes its spec or deletes it (a fixture's change
 * cannot be told on the bus from here, so the paused reconcile could not be
 * held until it is there).
 */
export function overlapApplies(steps: readonly Step[], index: number): boolean {
  const next = steps[index + 1]?.action;
  return steps[index]?.action !== 'delete' && (next === 'apply' || next === 'delete');
}

/** create s0, s1, back to s0, s2, the fixtures' revisions, delete, create s1 again (same
 *  name), delete: with the generated specs, s1 is the low boundary and s2 the high one. */
export function stepsOf(
  specs: readonly unknown[],
  revisions: readonly FixtureRevision[] = [],
): Step[] {
  const [s0, s1 = s0, s2 = s1] = specs;
  const steps: Step[] = [{ action: 'apply', spec: s0, why: 'create with spec 0' }];
  const change = (spec: unknown, why: string) => {
    const last = [...steps].reverse().find((step) => step.action === 'apply');
    if (last?.action === 'apply' && isDeepStrictEqual(last.spec, spec)) return;
    steps.push({ action: 'apply', spec, why });
  };
  change(s1, 'change to spec 1');
  change(s0, 'change back to spec 0');
  change(s2, 'change to spec 2');
  for (const { fixture, revision } of revisions)
    steps.push({
      action: 'fixture',
      fixture,
      why: `change ${fixtureName(fixture)} to its revision ${revision}`,
    });
  steps.push({ action: 'delete', why: 'delete' });
  steps.push({ action: 'apply', spec: s1, why: 'create again with the same name, spec 1' });
  steps.push({ action: 'delete', why: 'delete again' });
  return steps;
}
