import { describe, expect, it } from 'vitest';
import { budgetPeriodEnd, budgetWindow } from './key-budget.js';

const at = (iso: string) => new Date(iso);

describe('key budget periods (UTC)', () => {
  it('a day runs from 00:00 to 00:00 UTC', () => {
    expect(budgetWindow('day', at('2030-03-15T23:59:59.999Z')).start).toEqual(at('2030-03-15T00:00:00Z'));
    expect(budgetWindow('day', at('2030-03-16T00:00:00Z')).start).toEqual(at('2030-03-16T00:00:00Z'));
    expect(budgetPeriodEnd('day', at('2030-03-15T12:00:00Z'))).toEqual(at('2030-03-16T00:00:00Z'));
    // Not the local day: +14:00 is already the 16th there.
    expect(budgetWindow('day', at('2030-03-16T13:00:00+14:00')).start).toEqual(at('2030-03-15T00:00:00Z'));
  });

  it('a week starts on Monday 00:00 UTC', () => {
    // 2030-03-11 is a Monday, 2030-03-17 a Sunday.
    for (const day of ['2030-03-11T00:00:00Z', '2030-03-13T08:00:00Z', '2030-03-17T23:59:59Z']) {
      expect(budgetWindow('week', at(day)).start).toEqual(at('2030-03-11T00:00:00Z'));
    }
    expect(budgetWindow('week', at('2030-03-18T00:00:00Z')).start).toEqual(at('2030-03-18T00:00:00Z'));
    expect(budgetPeriodEnd('week', at('2030-03-17T23:59:59Z'))).toEqual(at('2030-03-18T00:00:00Z'));
    // Across a month and a year.
    expect(budgetWindow('week', at('2031-01-01T10:00:00Z')).start).toEqual(at('2030-12-30T00:00:00Z'));
  });

  it('a month starts on the 1st, and ends on the next 1st however long it is', () => {
    expect(budgetWindow('month', at('2030-02-28T23:00:00Z')).start).toEqual(at('2030-02-01T00:00:00Z'));
    expect(budgetPeriodEnd('month', at('2030-02-10T00:00:00Z'))).toEqual(at('2030-03-01T00:00:00Z'));
    expect(budgetPeriodEnd('month', at('2030-12-31T23:59:59Z'))).toEqual(at('2031-01-01T00:00:00Z'));
  });

  it('a total never resets', () => {
    expect(budgetWindow('total', at('2030-03-15T12:00:00Z')).start).toEqual(new Date(0));
    expect(budgetPeriodEnd('total', at('2030-03-15T12:00:00Z'))).toBeNull();
  });

  it('refuses an invalid date', () => {
    expect(() => budgetWindow('day', new Date(Number.NaN))).toThrow(RangeError);
  });
});
