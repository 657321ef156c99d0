/** A usage section: per hour or day over a chosen range (the last day, week, month), as charts. */
import { useState } from 'preact/hooks';
import type { UsageReport } from '../types';
import { useLoad } from '../use-load';
import { ErrorNotice, Loading } from './notice';
import { UsageCharts } from './usage-chart';

const RANGES = [
  { days: 1, label: 'Last 24 hours' },
  { days: 7, label: 'Last 7 days' },
  { days: 30, label: 'Last 30 days' },
  { days: 90, label: 'Last 90 days' },
] as const;

export interface UsageChoice {
  by: 'hour' | 'day';
  /** ISO 8601: the start of the range. */
  from: string;
}

export function UsageSection({ title, load, id }: { title: string; load: (choice: UsageChoice) => Promise<UsageReport>; id: string }) {
  const [by, setBy] = useState<'hour' | 'day'>('day');
  const [days, setDays] = useState<number>(7);
  const from = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - days * 86_400_000).toISOString();
  const report = useLoad(() => load({ by, from }), [by, days]);
  return (
    <section aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>{title}</h2>
      <div class="segmented">
        <div class="field">
          <label for={`${id}-range`}>Range</label>
          <select id={`${id}-range`} value={String(days)} onChange={(event) => setDays(Number(event.currentTarget.value))}>
            {RANGES.map((range) => (
              <option key={range.days} value={String(range.days)}>
                {range.label}
              </option>
            ))}
          </select>
        </div>
        <fieldset class="choice">
          <legend>Per</legend>
          <label>
            <input type="radio" name={`${id}-by`} value="hour" checked={by === 'hour'} onChange={() => setBy('hour')} /> Hour
          </label>
          <label>
            <input type="radio" name={`${id}-by`} value="day" checked={by === 'day'} onChange={() => setBy('day')} /> Day
          </label>
        </fieldset>
      </div>
      <ErrorNotice error={report.error} />
      {report.data === undefined ? report.loading ? <Loading what="usage" /> : null : <UsageCharts report={report.data} label={title} />}
    </section>
  );
}
