// How the CLI prints for people: aligned tables, ages in the largest fitting unit.
import { safeField } from './terminal-safe.js';

/** An aligned table, widest cell per column; every cell printed terminal-safe. */
export function table(header: readonly string[], cells: readonly (readonly string[])[]): string {
  const rows = cells.map((row) => row.map(safeField));
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  return `${[line(header), ...rows.map(line)].join('\n')}\n`;
}

/** A duration in ms as 850ms, 12.5s, 7m or 3h; '-' when there is none. */
export function formatAge(ms: number | undefined): string {
  if (ms === undefined) return '-';
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  if (ms < 120_000) return `${(ms / 1_000).toFixed(1)}s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)}m`;
  return `${Math.round(ms / 3_600_000)}h`;
}
