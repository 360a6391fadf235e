// What failed, with why: a library's error often says only "fetch failed" and
// keeps the reason ("connect ECONNREFUSED 10.0.0.7:8080") in its cause. Events,
// conditions and the outcome records (`kubebus history`) show both, in the
// error's first line.

/** The first non-empty line of a text ('' when none). */
function firstLine(text: string): string {
  return text.split('\n').find((line) => line.trim() !== '') ?? '';
}

/** What a cause says: its message's first line, else its code (an AggregateError of refusals has neither message nor more). */
function causeLine(cause: unknown): string {
  if (!(cause instanceof Error)) return '';
  const line = firstLine(cause.message);
  if (line !== '') return line;
  const { code } = cause as { code?: unknown };
  return typeof code === 'string' ? code : '';
}

/**
 * The error's message with its first cause's line after its own first line,
 * unless it already says it: "fetch failed: connect ECONNREFUSED 127.0.0.1:8080".
 */
export function messageWithCause(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const said = causeLine(error instanceof Error ? error.cause : undefined);
  if (said === '' || message.includes(said)) return message;
  const first = firstLine(message);
  if (first === '') return said;
  const at = message.indexOf(first) + first.length;
  return `${message.slice(0, at)}: ${said}${message.slice(at)}`;
}
