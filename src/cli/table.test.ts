import { describe, expect, it } from 'vitest';
import { formatTable, formatTimestamp } from './table.js';

describe('formatTable', () => {
  it('pads columns to the widest cell, right-aligns numbers and trims line ends', () => {
    const text = formatTable(
      [{ header: 'MODEL' }, { header: 'REQUESTS', align: 'right' }, { header: 'NOTE' }],
      [
        ['model-5.6-mini', '7', ''],
        ['m', '1234', 'x'],
      ],
    );
    expect(text.split('\n')).toEqual([
      'MODEL           REQUESTS  NOTE',
      'model-5.6-mini         7',
      'm                   1234  x',
    ]);
  });

  it('prints only the header for no rows', () => {
    expect(formatTable([{ header: 'ID' }, { header: 'NAME' }], [])).toBe('ID  NAME');
  });
});

describe('formatTimestamp', () => {
  it('drops milliseconds and the T', () => {
    expect(formatTimestamp(new Date('2025-06-01T12:30:05.123Z'))).toBe('2025-06-01 12:30:05Z');
  });
});
