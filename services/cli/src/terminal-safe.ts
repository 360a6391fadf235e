// The one printer for what the CLI shows of the bus and the apiserver: a
// dead letter's reason, an Event's or a condition's message, an object's
// name, a diff of its fields — text anyone who can write an object or reach
// the sink chose. A terminal obeys control characters in it (ESC and CSI
// sequences move the cursor, rewrite earlier lines, set the window title,
// some emulators even answer back), and bidi controls reorder what is shown
// (Trojan Source, CVE-2021-42574). Every such character is printed escaped,
// as \u{…}, so what is seen is what was sent.

/**
 * C0 and C1 controls (with DEL), the line and paragraph separators, and the
 * bidi controls: embeddings and overrides U+202A–U+202E, isolates
 * U+2066–U+2069, and the marks U+200E, U+200F and U+061C.
 */
/* eslint-disable no-control-regex -- control characters are what is being escaped */
const UNSAFE =
  /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g;
// the same, newlines left alone
const UNSAFE_BUT_NEWLINE =
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g;

/* eslint-enable no-control-regex */

const escape = (c: string) => `\\u{${c.charCodeAt(0).toString(16).padStart(4, '0')}}`;

/** One field, every unsafe character (newlines too) escaped. */
export function safeField(text: string): string {
  return text.replace(UNSAFE, escape);
}

/** A whole output the CLI formatted: unsafe characters escaped, its own newlines kept. */
export function safeText(text: string): string {
  return text.replace(UNSAFE_BUT_NEWLINE, escape);
}

/** One line of a field: whitespace runs folded to a space, escaped, cut at `max` characters. */
export function printable(text: string | undefined, max = Number.POSITIVE_INFINITY): string {
  const line = safeField((text ?? '').replace(/[ \t\n\r\f\v]+/g, ' ').trim());
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
