// An invalid spec is described in the fields its author wrote. The object a
// reconcile gets is in the storage version, but its author may have applied
// another one (a v1alpha1 manifest) and would not recognise the storage
// version's field names. managedFields record the apiVersion each manager
// wrote in and the fields it owns: the object converted to the version of the
// manager that wrote an invalid field (else of the most recent one that wrote
// the spec; never this operator) is checked with that version's schema. Only
// on the invalid path, and only for a resource with several versions: the bus
// records no managedFields, so it costs a GET.
import type { KubeObject } from '@kubebus/shared/events';
import {
  convertObject,
  versionNamed,
  type CustomResource,
  type Log,
} from '@kubebus/shared/definition';
import { describeIssues } from './status.js';

type Issues = Parameters<typeof describeIssues>[0];

/** A manager that wrote spec fields, as managedFields record it. */
export interface SpecWriter {
  readonly manager: string;
  /** the version it wrote in */
  readonly apiVersion: string;
  /** the fields it owns under the spec (its fieldsV1 under `f:spec`), named as in that version */
  readonly fields: Readonly<Record<string, unknown>>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The managers that own spec fields of the object itself (not of a
 * subresource), `ours` left out, the most recent first. Times have a second's
 * precision: of two in the same second, the later listed comes first.
 */
export function specWriters(managedFields: unknown, ours: ReadonlySet<string>): SpecWriter[] {
  if (!Array.isArray(managedFields)) return [];
  const writers: { writer: SpecWriter; at: number; index: number }[] = [];
  for (const [index, entry] of (managedFields as unknown[]).entries()) {
    if (!isRecord(entry)) continue;
    const { manager, apiVersion, time, subresource, fieldsV1 } = entry;
    if (typeof apiVersion !== 'string') continue;
    if (typeof subresource === 'string' && subresource !== '') continue;
    const name = typeof manager === 'string' ? manager : '';
    if (ours.has(name)) continue;
    const fields = isRecord(fieldsV1) ? fieldsV1['f:spec'] : undefined;
    if (!isRecord(fields)) continue;
    const parsed = typeof time === 'string' ? Date.parse(time) : Number.NaN;
    const at = Number.isNaN(parsed) ? Number.NEGATIVE_INFINITY : parsed;
    writers.push({ writer: { manager: name, apiVersion, fields }, at, index });
  }
  return writers
    .sort((a, b) => (a.at === b.at ? b.index - a.index : b.at > a.at ? 1 : -1))
    .map(({ writer }) => writer);
}

/**
 * The spec's problems as `apiVersion` names them: the object (in the storage
 * version) converted to it and checked with its schema. Undefined when that
 * version is not one of the resource's, the conversion fails, or its schema
 * accepts the spec.
 */
export function issuesIn(
  resource: CustomResource,
  object: KubeObject,
  apiVersion: string,
): Issues | undefined {
  try {
    const version = versionNamed(resource, apiVersion);
    const converted = convertObject(resource, object, version);
    const parsed = version.spec.safeParse(converted.spec ?? {});
    return parsed.success ? undefined : parsed.error.issues;
  } catch {
    // not a version of the resource, or its conversion or a refinement of its
    // schema threw: the storage version's message, as before this existed
    return undefined;
  }
}

/** Whether a writer owns the field an issue is about (its top field; one about the whole spec: any writer). */
function wrote(writer: SpecWriter, issue: Issues[number]): boolean {
  const [field] = issue.path;
  return field === undefined || `f:${String(field)}` in writer.fields;
}

/**
 * One line per problem, in the version of the writer of an invalid field, else
 * of the most recent writer whose version finds problems; in the storage
 * version (today's message) when no writer's does. `issues` are the storage
 * version's.
 */
export function describeAsWritten(
  resource: CustomResource,
  object: KubeObject,
  issues: Issues,
  writers: readonly SpecWriter[],
): string {
  const inStorage = describeIssues(issues, 'spec');
  // each version checked once, however many entries name it (managedFields can be forged by the thousand)
  const byVersion = new Map<string, Issues | undefined>();
  const issuesOf = (apiVersion: string) => {
    if (!byVersion.has(apiVersion))
      byVersion.set(
        apiVersion,
        apiVersion === object.apiVersion ? issues : issuesIn(resource, object, apiVersion),
      );
    return byVersion.get(apiVersion);
  };
  let mostRecent: string | undefined;
  for (const writer of writers) {
    const found = issuesOf(writer.apiVersion);
    if (found === undefined) continue;
    // named from the definition, never from the entry: only a version of the resource gets here
    const message =
      found === issues
        ? inStorage
        : `${describeIssues(found, 'spec')} (as written in ${resource.group}/${versionNamed(resource, writer.apiVersion).name})`;
    if (found.some((issue) => wrote(writer, issue))) return message;
    mostRecent ??= message;
  }
  return mostRecent ?? inStorage;
}

export interface InvalidSpec {
  readonly resource: CustomResource;
  /** the object, in the storage version */
  readonly object: KubeObject;
  /** what the storage version's schema found */
  readonly issues: Issues;
  /** the object as the apiserver has it now, managedFields included */
  readonly read: () => Promise<KubeObject | undefined>;
  /** this operator's own field managers: they never write the spec */
  readonly ours: ReadonlySet<string>;
  readonly log: Pick<Log, 'warn'>;
}

/** One line per problem, in the fields of the version they were written in when managedFields say. */
export async function describeInvalidSpec(invalid: InvalidSpec): Promise<string> {
  const { resource, object, issues } = invalid;
  if (resource.versions.length < 2) return describeIssues(issues, 'spec');
  const writers = specWriters(await managedFieldsOf(invalid), invalid.ours);
  return describeAsWritten(resource, object, issues, writers);
}

async function managedFieldsOf(invalid: InvalidSpec): Promise<unknown> {
  const { object } = invalid;
  // read from the apiserver already (a fallback read): its managedFields are there
  if (object.metadata['managedFields'] !== undefined) return object.metadata['managedFields'];
  try {
    const current = await invalid.read();
    // another generation's spec may have been written by someone else, in another version
    if (current === undefined || current.metadata.generation !== object.metadata.generation)
      return undefined;
    return current.metadata['managedFields'];
  } catch (error) {
    invalid.log.warn(
      { err: error },
      "could not read which version the spec was written in: naming the storage version's fields",
    );
    return undefined;
  }
}
