// The one printer for what the CLI shows of the bus and the apiserver: a
// dead letter's reason, an Event's or a condition's message, an object's
// name, a diff of its fields — text anyone who can write an object or reach
// the sink chose. A terminal obeys control characters in it (ESC and CSI
// sequences move the cursor, rewrite earlier lines, set the window title,
// some emulators even answer back), and bidi controls reorder what is shown
// (Trojan Source, CVE-2021-42574). Every such character is printed escaped,
// as \u{…}, so what is seen is what was sent.

import {
  UNSAFE_CHARACTERS as UNSAFE,
  UNSAFE_CHARACTERS_BUT_NEWLINE as UNSAFE_BUT_NEWLINE,
  escapeCharacter as escape,
} from '@kubebus/shared/errors';

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
