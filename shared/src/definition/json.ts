// The JSON form of @kubernetes/client-node's model types (V1ConfigMap, …):
// its classes type timestamps as Date (its serializer converts them), the
// wire and the bus carry strings. Type-only: nothing of client-node is loaded.

/**
 * `T` as JSON carries it: Date → string, deeply readonly (readonly and mutable
 * values both fit), and an optional field may be given as undefined (JSON
 * leaves it out).
 */
export type Json<T> = T extends Date
  ? string
  : T extends readonly (infer Item)[]
    ? readonly Json<Item>[]
    : T extends object
      ? { readonly [K in keyof T]: Json<T[K]> | (undefined extends T[K] ? undefined : never) }
      : T;
