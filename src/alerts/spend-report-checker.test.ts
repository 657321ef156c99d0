/** The period a spend report covers: the UTC day or the Monday-to-Monday week that ended last. */
import { describe, expect, it } from 'vitest';
import { lastEndedPeriod } from './spend-report-checker.js';

const iso = (period: { from: Date; to: Date }) => [period.from.toISOString(), period.to.toISOString()];

describe('lastEndedPeriod', () => {
  it('is yesterday (UTC) for a daily report, at any time of today', () => {
    expect(iso(lastEndedPeriod('day', new Date('2026-11-28T00:00:00.000Z')))).toEqual(['2026-11-27T00:00:00.000Z', '2026-11-28T00:00:00.000Z']);
    expect(iso(lastEndedPeriod('day', new Date('2026-11-28T23:59:59.999Z')))).toEqual(['2026-11-27T00:00:00.000Z', '2026-11-28T00:00:00.000Z']);
    expect(iso(lastEndedPeriod('day', new Date('2026-03-01T10:00:00.000Z')))).toEqual(['2026-02-28T00:00:00.000Z', '2026-03-01T00:00:00.000Z']);
  });

  it('is last week, Monday to Monday (UTC), for a weekly report', () => {
    // 2026-11-28 is a Saturday; 2026-11-23 the Monday of its week.
    expect(iso(lastEndedPeriod('week', new Date('2026-11-28T12:00:00.000Z')))).toEqual(['2026-11-16T00:00:00.000Z', '2026-11-23T00:00:00.000Z']);
    // A Monday: the week just ended.
    expect(iso(lastEndedPeriod('week', new Date('2026-11-23T00:00:00.000Z')))).toEqual(['2026-11-16T00:00:00.000Z', '2026-11-23T00:00:00.000Z']);
    // A Sunday still belongs to the week that started on the Monday before.
    expect(iso(lastEndedPeriod('week', new Date('2026-11-29T23:00:00.000Z')))).toEqual(['2026-11-16T00:00:00.000Z', '2026-11-23T00:00:00.000Z']);
  });
});
