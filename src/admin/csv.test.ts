import { describe, expect, it } from 'vitest';
import { parseCsv } from '../../test/support/csv.js';
import { csvField, csvLine, csvLines } from './csv.js';

describe('CSV', () => {
  it('quotes only what needs it, and reads back as written', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField(12)).toBe('12');
    expect(csvField(true)).toBe('true');
    expect(csvField(null)).toBe('');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    const awkward = ['a,b', 'say "hi"', 'two\nlines', 'cr\r\nlf', '', 'ünïcode 😀'];
    expect(parseCsv(csvLine(awkward))).toEqual([awkward]);
  });

  it('keeps text that a spreadsheet would run as a formula as text', () => {
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField('+1')).toBe(`"'+1"`);
    expect(csvField('@sum')).toBe(`"'@sum"`);
    expect(parseCsv(csvLine(['-2']))).toEqual([["'-2"]]);
    // Numbers are numbers, not text: a negative one stays as it is.
    expect(csvField(-2)).toBe('-2');
  });

  it('writes a header line and one CRLF-ended line per row', () => {
    const text = csvLines(['id', 'name', 'tags'], [{ id: 1, name: 'x', tags: ['a'] }, { id: 2, name: null, tags: null }]);
    expect(text).toBe('id,name,tags\r\n1,x,"[""a""]"\r\n2,,\r\n');
    expect(parseCsv(text)).toEqual([['id', 'name', 'tags'], ['1', 'x', '["a"]'], ['2', '', '']]);
  });
});
