/**
 * Aligned plain-text tables for people: columns padded to their widest cell, two spaces apart,
 * numbers right-aligned, no trailing spaces.
 */

export interface Column {
  header: string;
  align?: 'left' | 'right';
}

export function formatTable(columns: readonly Column[], rows: readonly (readonly string[])[]): string {
  const widths = columns.map((column, index) =>
    Math.max(column.header.length, ...rows.map((row) => (row[index] ?? '').length)),
  );
  const formatRow = (cells: readonly string[]): string =>
    columns
      .map((column, index) => {
        const cell = cells[index] ?? '';
        const width = widths[index] ?? 0;
        return column.align === 'right' ? cell.padStart(width) : cell.padEnd(width);
      })
      .join('  ')
      .trimEnd();
  return [formatRow(columns.map((column) => column.header)), ...rows.map(formatRow)].join('\n');
}

/** `2025-06-01 12:00:00Z`: an ISO instant without milliseconds, easier to scan in a column. */
export function formatTimestamp(date: Date): string {
  return date.toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, 'Z');
}
