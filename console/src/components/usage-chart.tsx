/**
 * Usage over time as charts (uPlot: small, no dependencies, canvas drawing, no inline script so the
 * strict Content-Security-Policy holds). uPlot gets numbers for drawing only: its axis figures are
 * rounded guides (`$600K`, `1.2M`), the axis as wide as its longest figure, and every amount in text
 * (the totals, the peak, the table) is the API's decimal string. The chart names its axis figures in
 * `data-axis-labels` and its width in `data-axis-size` (canvas text is not in the page).
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatUsd, usdToNanos } from '../money';
import type { UsageReport, UsageTotals } from '../types';
import { TableWrap } from './table-wrap';
import { utcText } from './time';

interface Metric {
  id: string;
  title: string;
  /** A number to draw (never shown as text for money). */
  draw: (row: UsageTotals) => number;
  /** The figure shown in words, exact. */
  total: (totals: UsageTotals) => string;
  money: boolean;
}

const tokens = (row: UsageTotals): number => row.input_tokens + row.output_tokens;

const METRICS: Metric[] = [
  { id: 'spend', title: 'Spend', draw: (row) => Number(row.cost_usd), total: (totals) => formatUsd(totals.cost_usd), money: true },
  { id: 'requests', title: 'Requests', draw: (row) => row.requests, total: (totals) => String(totals.requests), money: false },
  { id: 'errors', title: 'Errors', draw: (row) => row.errors, total: (totals) => String(totals.errors), money: false },
  { id: 'tokens', title: 'Tokens (in + out)', draw: tokens, total: (totals) => String(tokens(totals)), money: false },
];

const localTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const localDay = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

/** The four charts of a usage report grouped by hour or day, and the same figures as a table. */
export function UsageCharts({ report, label }: { report: UsageReport; label: string }) {
  if (report.rows.length === 0) return <p>No usage in this range.</p>;
  const peak = report.rows.reduce((highest, row) => (usdToNanos(row.cost_usd) > usdToNanos(highest.cost_usd) ? row : highest));
  const when = (group: string): string => (report.by === 'hour' ? localTime : localDay).format(new Date(group));
  return (
    <>
      <div class="charts">
        {METRICS.map((metric) => (
          <figure class="chart-card" key={metric.id}>
            <figcaption>
              <span class="chart-title">{metric.title}</span> <strong class="chart-total">{metric.total(report.total)}</strong>
              {metric.money ? <span class="help"> (highest {report.by === 'hour' ? 'hour' : 'day'}: {formatUsd(peak.cost_usd)})</span> : null}
            </figcaption>
            <Chart report={report} metric={metric} label={`${label}: ${metric.title.toLowerCase()} per ${report.by}`} />
          </figure>
        ))}
      </div>
      <details class="chart-data">
        <summary>The figures as a table</summary>
        <TableWrap label={`${label} per ${report.by}`}>
          <table>
            <thead>
              <tr>
                <th scope="col">{report.by === 'hour' ? 'Hour' : 'Day'}</th>
                <th scope="col" class="number">Spend</th>
                <th scope="col" class="number">Requests</th>
                <th scope="col" class="number">Errors</th>
                <th scope="col" class="number">Tokens</th>
              </tr>
            </thead>
            <tbody>
              {report.rows.map((row) => (
                <tr key={row.group}>
                  <td data-label={report.by === 'hour' ? 'Hour' : 'Day'}>
                    <time dateTime={row.group} title={utcText(new Date(row.group))}>
                      {when(row.group)}
                    </time>
                  </td>
                  <td data-label="Spend" class="number" title={`${row.cost_usd} USD`}>
                    {formatUsd(row.cost_usd)}
                  </td>
                  <td data-label="Requests" class="number">{row.requests}</td>
                  <td data-label="Errors" class="number">{row.errors}</td>
                  <td data-label="Tokens" class="number">{tokens(row)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      </details>
    </>
  );
}

const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumSignificantDigits: 3 });

/** An axis figure: compact (`600K`, `1.25M`, `0.004`), with `$` for money; blank between whole counts. */
function axisFigure(tick: number, money: boolean): string {
  if (!money && !Number.isInteger(tick)) return '';
  return `${money ? '$' : ''}${compact.format(tick)}`;
}

export const AXIS_FONT = '12px system-ui, -apple-system, "Segoe UI", sans-serif';
/** Room besides the widest figure: the tick marks and a gap to the plot. */
const AXIS_PADDING = 18;
let measuring: CanvasRenderingContext2D | null = null;

/** The width the axis needs for `labels` in CSS pixels. */
export function axisWidth(labels: readonly string[]): number {
  measuring ??= document.createElement('canvas').getContext('2d');
  if (measuring === null) return 60;
  measuring.font = AXIS_FONT;
  const widest = labels.reduce((most, label) => Math.max(most, measuring?.measureText(label).width ?? 0), 0);
  return Math.ceil(widest) + AXIS_PADDING;
}

const BUCKET_SECONDS = { hour: 3_600, day: 86_400 } as const;

/**
 * Every hour or day of the range, those without usage at zero, so the line does not join distant
 * points as if they were neighbours (the API lists only the groups with usage).
 */
function series(report: UsageReport, metric: Metric): { times: number[]; values: number[] } {
  const step = BUCKET_SECONDS[report.by === 'hour' ? 'hour' : 'day'];
  const byTime = new Map(report.rows.map((row) => [Date.parse(row.group) / 1000, metric.draw(row)]));
  const first = Date.parse(report.from ?? report.rows[0]?.group ?? new Date().toISOString()) / 1000;
  const last = (report.to === null ? Date.now() : Date.parse(report.to)) / 1000;
  const times: number[] = [];
  const values: number[] = [];
  for (let time = Math.floor(first / step) * step; time <= last && times.length < 5_000; time += step) {
    times.push(time);
    values.push(byTime.get(time) ?? 0);
  }
  return { times, values };
}

function Chart({ report, metric, label }: { report: UsageReport; metric: Metric; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (element === null) return undefined;
    const { times, values } = series(report, metric);
    const accent = getComputedStyle(element).getPropertyValue('--accent').trim() || '#1f5fbf';
    const muted = getComputedStyle(element).getPropertyValue('--muted').trim() || '#5a6470';
    const axis = { stroke: muted, grid: { stroke: 'rgba(128,128,128,0.2)' }, ticks: { stroke: 'rgba(128,128,128,0.3)' } };
    const options: uPlot.Options = {
      width: Math.max(element.clientWidth, 200),
      height: 160,
      legend: { show: false },
      cursor: { show: false },
      scales: { x: { time: true, range: [times[0] ?? 0, times.at(-1) ?? 1] }, y: { range: (_plot, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [
        { ...axis, font: AXIS_FONT },
        {
          ...axis,
          font: AXIS_FONT,
          values: (_plot, ticks) => ticks.map((tick) => axisFigure(tick, metric.money)),
          // uPlot asks again once the ticks are known; the axis then fits its widest figure.
          size: (_plot, values) => {
            const labels = (values ?? []).filter((label) => label !== '');
            const size = axisWidth(labels);
            element.dataset.axisLabels = labels.join(' ');
            element.dataset.axisSize = String(size);
            return size;
          },
        },
      ],
      series: [{}, { stroke: accent, width: 2, fill: 'rgba(31,95,191,0.12)', points: { show: times.length <= 31 } }],
    };
    const plot = new uPlot(options, [times, values], element);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(element.clientWidth, 200), height: 160 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [report, metric]);
  return <div class="chart" ref={box} role="img" aria-label={label} />;
}
