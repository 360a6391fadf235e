// The JSON form of @kubernetes/client-node's model types (V1ConfigMap, …):
// its classes type timestamps as Date (its serializer converts them), the
// wire and the bus carry strings. Type-only: nothing of client-node is loaded.

/**
 * A field's name on the wire: client-node prefixes the JSON names that are
 * reserved words with `_` (`_default` of a LimitRange item, `_from` of a
 * NetworkPolicy rule, `_continue`), and renames them back only in its own
 * serializer, which kubebus does not use. No Kubernetes field starts with `_`.
 */
type WireName<K> = K extends `_${infer Name}` ? Name : K;

/**
 * `T` as JSON carries it: Date → string, the wire's field names, deeply
 * readonly (readonly and mutable values both fit), and an optional field may
 * be given as undefined (JSON leaves it out).
 */
export type Json<T> = T extends Date
  ? string
  : T extends readonly (infer Item)[]
    ? readonly Json<Item>[]
    : T extends object
      ? {
          readonly [K in keyof T as WireName<K>]:
            Json<T[K]> | (undefined extends T[K] ? undefined : never);
        }
      : T;
