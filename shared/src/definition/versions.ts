// A custom resource served in several versions: a zod spec and status per
// version, one storage version (the hub, as in controller-runtime's
// hub-and-spoke conversion), and for every other version the two pure
// functions that convert its objects to and from the storage version. The
// operator only ever sees the storage version; the conversion webhook that
// `kubebus run` serves uses these functions for everyone else.
import type { z } from 'zod';
import type { ObjectMeta, RuntimeStatus } from './objects.js';
import type { PrinterColumn, ValidationRule } from './resource.js';

/** One version's schemas. */
export interface VersionSchemas<
  Spec extends z.ZodType = z.ZodType,
  Status extends z.ZodType = z.ZodType,
> {
  readonly spec: Spec;
  readonly status: Status;
  /** false: kept in the CRD (objects may still be stored in it) but no longer served; default true */
  readonly served?: boolean;
  /** a deprecation warning kubectl prints when this version is used (true: the apiserver's default text) */
  readonly deprecated?: true | string;
  /**
   * this version's CEL rules on the whole object; the definition's own
   * `validations` apply to the storage version only (a rule naming a field an
   * old version lacks would make the apiserver refuse the CRD)
   */
  readonly validations?: readonly ValidationRule[];
  /** this version's extra `kubectl get` columns; the definition's own are the storage version's */
  readonly printerColumns?: readonly PrinterColumn[];
}

/**
 * A value whose objects may lack any field, at any depth. A conversion is
 * handed such objects: in a server-side apply the apiserver converts an
 * object with the fields its applier no longer applies taken out, and stores
 * what the conversion answers — so a conversion converts what is there,
 * never throws on what is not, and invents nothing for it.
 */
export type PartialDeep<T> = T extends readonly unknown[]
  ? T // a list is atomic (kubebus' CRDs say no other list type): whole or absent
  : T extends object
    ? { [K in keyof T]?: PartialDeep<T[K]> | undefined }
    : T;

/** What a conversion function gets: an object of one version, as stored or sent. */
export interface Convertible<Spec, Status> {
  /** read-only: the apiserver refuses a conversion that changes metadata other than labels and annotations */
  readonly metadata: ObjectMeta;
  /** whole when stored; any field may be absent in a server-side apply (PartialDeep) */
  readonly spec: PartialDeep<Spec>;
  /** the version's own status fields as far as written; conditions and observedGeneration are carried for you */
  readonly status: PartialDeep<Status> & RuntimeStatus;
}

/**
 * What a conversion function answers: the object in the other version. A
 * whole object must come back whole (the test kit's `checkConversions`
 * checks it against the version's schema); a partial one, as far as it goes.
 */
export interface Converted<Spec, Status> {
  readonly spec: PartialDeep<Spec>;
  readonly status?: PartialDeep<Status>;
  /**
   * annotations to set (a string) or delete (null) on the converted object:
   * where a field the other version cannot hold is kept so a round trip loses
   * nothing. Delete such an annotation when you restore from it (and when
   * there is nothing to keep): a stale one left on the object would restore,
   * later, a field nobody wrote (controller-runtime's practice)
   */
  readonly annotations?: Readonly<Record<string, string | null>>;
}

type SpecOf<V extends VersionSchemas> = z.output<V['spec']>;
type StatusOf<V extends VersionSchemas> = z.output<V['status']>;

/**
 * The conversions of one version to and from the storage version (controller-
 * runtime's ConvertTo and ConvertFrom). Both must be pure and total: a
 * conversion that throws fails the apiserver's request with its message.
 * A stored object passed the CRD's schema (not the zod refinements); a
 * server-side apply's may lack any field (PartialDeep).
 */
export interface Conversion<Version extends VersionSchemas, Storage extends VersionSchemas> {
  toStorage(
    object: Convertible<SpecOf<Version>, StatusOf<Version>>,
  ): Converted<SpecOf<Storage>, StatusOf<Storage>>;
  fromStorage(
    object: Convertible<SpecOf<Storage>, StatusOf<Storage>>,
  ): Converted<SpecOf<Version>, StatusOf<Version>>;
}

/** Conversions for every version but the storage one. */
export type Conversions<
  Versions extends Readonly<Record<string, VersionSchemas>>,
  Storage extends keyof Versions,
> = {
  readonly [Name in Exclude<keyof Versions, Storage>]: Conversion<
    Versions[Name],
    Versions[Storage]
  >;
};

/** One version as the runtime and the generator see it, whatever the definition's form. */
export interface ServedVersion {
  readonly name: string;
  readonly spec: z.ZodType;
  readonly status: z.ZodType;
  readonly served: boolean;
  readonly storage: boolean;
  readonly deprecated?: true | string;
  /** the CEL rules of this version's schema (the CRD's x-kubernetes-validations) */
  readonly validations: readonly ValidationRule[];
  /** this version's extra printer columns (Ready, Reason and Age are added) */
  readonly printerColumns: readonly PrinterColumn[];
  /** absent on the storage version */
  readonly conversion?: UntypedConversion;
}

/** A conversion with its types erased: what the webhook calls. */
export interface UntypedConversion {
  toStorage(object: Convertible<unknown, unknown>): Converted<unknown, unknown>;
  fromStorage(object: Convertible<unknown, unknown>): Converted<unknown, unknown>;
}
