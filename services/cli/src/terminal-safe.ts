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

const hex = (code: number, width: number) => code.toString(16).padStart(width, '0');

/**
 * JSON text with every unsafe character in its strings as a `\u` escape: the
 * same data to a parser, inert on a terminal (JSON.stringify escapes only
 * C0 controls; the C1 CSI and the bidi overrides pass through it).
 */
export function inertJson(text: string): string {
  return text.replace(UNSAFE_BUT_NEWLINE, (c) => {
    let escaped = '';
    for (let i = 0; i < c.length; i++) escaped += `\\u${hex(c.charCodeAt(i), 4)}`;
    return escaped;
  });
}

/**
 * YAML text whose strings are all double-quoted with every unsafe character
 * as an escape (`\u` or `\U`): the same data to a parser, inert on a terminal.
 */
export function inertDoubleQuotedYaml(text: string): string {
  return text.replace(UNSAFE_BUT_NEWLINE, (c) => {
    const code = c.codePointAt(0) ?? 0;
    return code > 0xffff ? `\\U${hex(code, 8)}` : `\\u${hex(code, 4)}`;
  });
}

/** Whether the text holds a character that acts on a terminal (newlines aside). */
export function actsOnTerminal(text: string): boolean {
  return text.search(UNSAFE_BUT_NEWLINE) !== -1;
}
