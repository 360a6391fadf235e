// The apiserver's Warning response headers (RFC 7234: `299 - "text"`): a
// deprecated API, an unknown field dropped, a policy in warn mode. Each is
// counted; each distinct text is logged once per client (one per process),
// as client-go's WarningHandler deduplicates them.

export interface WarningSink {
  warn(fields: object, message: string): void;
}

/** The texts of the 299 warnings in a Warning header (repeated headers arrive joined or as an array). */
export function parseWarnings(header: string | readonly string[] | undefined): string[] {
  if (header === undefined) return [];
  const texts: string[] = [];
  // warn-code SP warn-agent SP quoted warn-text [SP quoted warn-date], comma-separated
  const warning = /(\d{3})\s+\S+\s+"((?:[^"\\]|\\.)*)"(?:\s+"[^"]*")?/g;
  for (const value of typeof header === 'string' ? [header] : header)
    for (const match of value.matchAll(warning))
      if (match[1] === '299') texts.push((match[2] ?? '').replace(/\\(.)/g, '$1'));
  return texts;
}

export class ApiserverWarnings {
  readonly #seen = new Set<string>();

  constructor(
    private readonly sink: WarningSink,
    private readonly counter?: { inc(): void },
    /** distinct texts remembered; past it the oldest are logged again */
    private readonly capacity = 1_000,
  ) {}

  /** Counts the warnings of a response and logs the ones not logged before. */
  record(header: string | readonly string[] | undefined, method: string, path: string): void {
    for (const text of parseWarnings(header)) {
      this.counter?.inc();
      if (this.#seen.has(text)) continue;
      this.#seen.add(text);
      if (this.#seen.size > this.capacity) {
        const oldest = this.#seen.values().next().value;
        if (oldest !== undefined) this.#seen.delete(oldest);
      }
      this.sink.warn({ warning: text, method, path }, `apiserver warning: ${text}`);
    }
  }
}

/** Without a logger: Node's own process warnings (stderr), deduplicated the same way. */
export const processWarnings: WarningSink = {
  warn(_fields, message) {
    process.emitWarning(message, 'KubernetesWarning');
  },
};
