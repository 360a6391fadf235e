// A Secret as kubebus shows it anywhere but ctx.readSecret: without its values
// (data, stringData), as the watcher records it on the bus. Any other object
// as it is.

/** The object, a core Secret without `data` and `stringData`. */
export function withoutSecretValues<T>(object: T): T {
  if (object === null || typeof object !== 'object') return object;
  const fields = object as Record<string, unknown>;
  if (fields['apiVersion'] !== 'v1' || fields['kind'] !== 'Secret') return object;
  const { data: _data, stringData: _stringData, ...rest } = fields;
  return rest as T;
}
