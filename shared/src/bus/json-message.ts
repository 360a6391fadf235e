// A message's JSON body, or undefined when it is not JSON: what a reader that
// skips messages it cannot use (schema-checked next) needs.
const decoder = new TextDecoder();

export function jsonOf(data: Uint8Array): unknown {
  try {
    return JSON.parse(decoder.decode(data));
  } catch {
    return undefined;
  }
}
