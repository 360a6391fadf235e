// Resources an operator names: its own custom resources (defineResource: a zod
// spec and status, from which the CRD is generated) and built-in kinds.
import type { z } from 'zod';
import type { CustomBody, DesiredBody, KubeObjectOf, ResourceObject } from './objects.js';
import type { Conversions, ServedVersion, UntypedConversion, VersionSchemas } from './versions.js';

export type Scope = 'Namespaced' | 'Cluster';

/**
 * A Kubernetes resource: where it is served and what its objects are called.
 * The one vocabulary for a resource (group, version, kind, plural, scope),
 * used alike by the definition, the roles and the generated manifests.
 */
export interface Resource<Shape extends ResourceObject = ResourceObject, Body = DesiredBody> {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** the plural resource name, e.g. 'deployments' */
  readonly plural: string;
  readonly scope: Scope;
  /** never set: carries the type of the resource's objects */
  readonly __shape?: Shape;
  /** never set: carries the type of what `ctx.apply(resource, body)` takes */
  readonly __body?: Body;
}

/** The type of a resource's objects (what `ctx.get` and `ctx.apply` answer). */
export type ObjectOf<R extends Resource> = R extends Resource<infer Shape, unknown> ? Shape : never;

/** What `ctx.apply(resource, body)` takes for a resource: no apiVersion or kind, no status. */
export type BodyOf<R extends Resource> =
  R extends Resource<ResourceObject, infer Body> ? Body : never;

export interface PrinterColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  readonly jsonPath: string;
  readonly description?: string;
  /** 0 shows in `kubectl get`, more only with `-o wide` */
  readonly priority?: number;
}

/** A CEL validation rule on the whole object (x-kubernetes-validations at the root). */
export interface ValidationRule {
  readonly rule: string;
  readonly message: string;
  /** the reason the apiserver answers with (default FieldValueInvalid) */
  readonly reason?:
    'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
}

/** What every custom resource definition says, in one version or several. */
export interface ResourceBasics {
  /** the API group, a DNS subdomain such as example.com */
  readonly group: string;
  /** the kind, in PascalCase */
  readonly kind: string;
  /** default: the kind in lower case, made plural as kubebuilder does (`Policy` → `policies`, `Ingress` → `ingresses`) */
  readonly plural?: string;
  readonly scope: Scope;
  readonly shortNames?: readonly string[];
  readonly categories?: readonly string[];
  /**
   * extra columns of `kubectl get`; Ready and Age are added for you. With
   * `versions`: the storage version's (each version may list its own)
   */
  readonly printerColumns?: readonly PrinterColumn[];
  readonly description?: string;
  /** CEL rules on the whole object. With `versions`: the storage version's (each version may list its own) */
  readonly validations?: readonly ValidationRule[];
}

export interface ResourceDefinition<
  Spec extends z.ZodType,
  Status extends z.ZodType,
> extends ResourceBasics {
  /** e.g. v1alpha1 */
  readonly version: string;
  readonly spec: Spec;
  /** status fields of your own; conditions and observedGeneration are added for you */
  readonly status: Status;
}

/**
 * A resource served in several versions: zod schemas per version, the one
 * objects are stored in (the operator reconciles in it), and conversions
 * between every other version and it.
 */
export interface VersionedResourceDefinition<
  Versions extends Readonly<Record<string, VersionSchemas>>,
  Storage extends keyof Versions & string,
> extends ResourceBasics {
  readonly versions: Versions;
  readonly storage: Storage;
  readonly convert: Conversions<Versions, Storage>;
}

/** A custom resource defined here: its objects arrive with a typed, validated spec. */
export interface CustomResource<
  Spec extends z.ZodType = z.ZodType,
  Status extends z.ZodType = z.ZodType,
> extends Resource<KubeObjectOf<z.output<Spec>, z.output<Status>>, CustomBody<z.input<Spec>>> {
  /** the storage version's definition: what the operator reconciles */
  readonly definition: ResourceDefinition<Spec, Status>;
  /** every version the CRD lists, the storage one included (one for a single-version resource) */
  readonly versions: readonly ServedVersion[];
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const VERSION = /^v[0-9]+((alpha|beta)[0-9]+)?$/;
const KIND = /^[A-Z][A-Za-z0-9]*$/;

/** Throws one line naming the field when a definition cannot become a valid CRD. */
function check(ok: boolean, what: string): asserts ok {
  if (!ok) throw new TypeError(`defineResource: ${what}`);
}

/**
 * A custom resource: its group, version, kind and scope, and zod schemas for
 * its spec and status — or, served in several versions, schemas per version,
 * the storage version and the conversions. `kubebus generate` makes its CRD
 * from this.
 */
export function defineResource<Spec extends z.ZodType, Status extends z.ZodType>(
  definition: ResourceDefinition<Spec, Status>,
): CustomResource<Spec, Status>;
export function defineResource<
  Versions extends Readonly<Record<string, VersionSchemas>>,
  Storage extends keyof Versions & string,
>(
  definition: VersionedResourceDefinition<Versions, Storage>,
): CustomResource<Versions[Storage]['spec'], Versions[Storage]['status']>;
export function defineResource(
  definition:
    | ResourceDefinition<z.ZodType, z.ZodType>
    | VersionedResourceDefinition<Readonly<Record<string, VersionSchemas>>, string>,
): CustomResource {
  const single = 'versions' in definition ? storageDefinition(definition) : definition;
  const versions =
    'versions' in definition
      ? versionsOf(definition)
      : [
          {
            name: single.version,
            spec: single.spec,
            status: single.status,
            served: true,
            storage: true,
            validations: single.validations ?? [],
            printerColumns: single.printerColumns ?? [],
          },
        ];
  check(
    DNS_SUBDOMAIN.test(single.group) && single.group.includes('.'),
    `group "${single.group}" must be a DNS subdomain with a dot, e.g. example.com`,
  );
  for (const version of versions)
    check(
      VERSION.test(version.name),
      `version "${version.name}" must look like v1, v1alpha1 or v2beta3`,
    );
  check(KIND.test(single.kind), `kind "${single.kind}" must be PascalCase letters and digits`);
  const plural = single.plural ?? pluralOf(single.kind);
  check(
    /^[a-z][a-z0-9]*$/.test(plural),
    `plural "${plural}" must be lower-case letters and digits`,
  );
  return Object.freeze({
    group: single.group,
    version: single.version,
    kind: single.kind,
    plural,
    scope: single.scope,
    definition: single,
    versions: Object.freeze(versions),
  });
}

type AnyVersioned = VersionedResourceDefinition<Readonly<Record<string, VersionSchemas>>, string>;

/** The storage version's single-version definition: what the runtime and replay use. */
function storageDefinition(definition: AnyVersioned): ResourceDefinition<z.ZodType, z.ZodType> {
  const { versions, storage, convert: _convert, ...basics } = definition;
  const schemas = versions[storage];
  check(
    schemas !== undefined,
    `storage "${storage}" must be one of the versions (${Object.keys(versions).join(', ')})`,
  );
  return { ...basics, version: storage, spec: schemas.spec, status: schemas.status };
}

function versionsOf(definition: AnyVersioned): ServedVersion[] {
  const conversions = definition.convert as Readonly<Record<string, UntypedConversion | undefined>>;
  return Object.entries(definition.versions).map(([name, schemas]) => {
    const storage = name === definition.storage;
    const conversion = conversions[name];
    check(
      storage || conversion !== undefined,
      `version "${name}" needs convert.${name} (toStorage and fromStorage)`,
    );
    check(schemas.served !== false || !storage, `the storage version "${name}" must be served`);
    return {
      name,
      spec: schemas.spec,
      status: schemas.status,
      served: schemas.served ?? true,
      storage,
      validations: [
        ...(storage ? (definition.validations ?? []) : []),
        ...(schemas.validations ?? []),
      ],
      printerColumns: [
        ...(storage ? (definition.printerColumns ?? []) : []),
        ...(schemas.printerColumns ?? []),
      ],
      ...(schemas.deprecated === undefined ? {} : { deprecated: schemas.deprecated }),
      ...(conversion === undefined || storage ? {} : { conversion }),
    };
  });
}

/** A built-in or third-party resource this operator owns or watches (not defined here). */
export function resource<
  Shape extends ResourceObject = ResourceObject,
  Body = DesiredBody,
>(reference: {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly scope: Scope;
}): Resource<Shape, Body> {
  return Object.freeze({ ...reference });
}

export function isCustomResource(value: Resource): value is CustomResource {
  return 'definition' in value;
}

/** "v1" or "group/version" */
export function apiVersionOf(resource: Pick<Resource, 'group' | 'version'>): string {
  return resource.group === '' ? resource.version : `${resource.group}/${resource.version}`;
}

/**
 * A kind's resource name as kubebuilder makes it (English plurals, lower
 * case): what `kubectl get <plural>` takes and the CRD is named by. Kinds
 * with irregular plurals name theirs (`plural`).
 */
export function pluralOf(kind: string): string {
  const word = kind.toLowerCase();
  if (/[^aeiou]y$/.test(word)) return `${word.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(word)) return `${word}es`;
  return `${word}s`;
}

/** kubectl's "plural.version.group" (core resources: "plural.version"). */
export function resourceName(resource: Pick<Resource, 'group' | 'version' | 'plural'>): string {
  return resource.group === ''
    ? `${resource.plural}.${resource.version}`
    : `${resource.plural}.${resource.version}.${resource.group}`;
}
