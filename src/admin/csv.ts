/**
 * CSV (RFC 4180) for the exports of the admin API and the CLI: one header line, then one line per
 * row, CRLF line ends. A field is quoted when it holds a comma, a quote, a line break, or starts
 * with a character a spreadsheet would read as a formula (then a leading `'` keeps it text).
 */
export type CsvValue = string | number | boolean | null;

const NEEDS_QUOTES = /[",\r\n]/;
const FORMULA_START = /^[=+\-@\t\r]/;

export function csvField(value: CsvValue): string {
  if (value === null) return '';
  if (typeof value !== 'string') return String(value);
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(text) || text !== value ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvLine(values: readonly CsvValue[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}

/** The header line and one line per row of `views`, for the given columns. */
export function csvLines<View extends object>(columns: readonly (keyof View & string)[], views: Iterable<View>): string {
  return csvLine(columns) + csvRows(columns, views);
}

/** One line per row of `views`, for the given columns, without the header line (a page of a streamed export). */
export function csvRows<View extends object>(columns: readonly (keyof View & string)[], views: Iterable<View>): string {
  let text = '';
  for (const view of views) text += csvLine(columns.map((column) => toCsvValue(view[column])));
  return text;
}

export function toCsvValue(value: unknown): CsvValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  return JSON.stringify(value);
}
