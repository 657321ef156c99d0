/**
 * A strict RFC 4180 reader for the tests of the CSV exports, written from the RFC rather than from
 * our writer: quoted fields with doubled quotes and line breaks, CRLF or LF line ends. Anything
 * else (a quote inside an unquoted field, text after a closing quote) throws.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let index = 0;
  const endRow = () => {
    rows.push(row);
    row = [];
  };
  if (text === '') return rows;
  for (;;) {
    let field = '';
    if (text[index] === '"') {
      index += 1;
      for (;;) {
        const quote = text.indexOf('"', index);
        if (quote === -1) throw new Error('CSV: unterminated quoted field');
        field += text.slice(index, quote);
        if (text[quote + 1] === '"') {
          field += '"';
          index = quote + 2;
        } else {
          index = quote + 1;
          break;
        }
      }
    } else {
      const match = /^[^,"\r\n]*/.exec(text.slice(index));
      field = match?.[0] ?? '';
      index += field.length;
      if (text[index] === '"') throw new Error('CSV: a quote inside an unquoted field');
    }
    row.push(field);
    if (index >= text.length) {
      endRow();
      return rows;
    }
    const next = text[index];
    if (next === ',') {
      index += 1;
      continue;
    }
    if (next === '\r' && text[index + 1] === '\n') index += 2;
    else if (next === '\n') index += 1;
    else throw new Error(`CSV: unexpected ${JSON.stringify(next)} after a field`);
    endRow();
    if (index >= text.length) return rows;
  }
}

/** Header and rows as objects keyed by the header's names. */
export function parseCsvRecords(text: string): { header: string[]; records: Array<Record<string, string>> } {
  const [header, ...rows] = parseCsv(text);
  if (header === undefined) throw new Error('CSV: no header line');
  for (const row of rows) if (row.length !== header.length) throw new Error(`CSV: a row of ${row.length} fields under a header of ${header.length}`);
  return { header, records: rows.map((row) => Object.fromEntries(header.map((name, column) => [name, row[column] ?? '']))) };
}
