/**
 * Health: outages in sight (README, "Web console"). Time to first byte, duration and error rate
 * per model or per target over a range, drawn one line per group, from the request log as the
 * server sums it (GET /admin/v1/health/requests: p50, p95 and max per hour or day); and the
 * history of targets taken out of rotation and back (GET /admin/v1/health/rotations). The range,
 * grouping and figure live in the address, so a link can open the page as wanted.
 */
import { useMemo } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../api';
import { PageHeading } from '../components/heading';
import { LineChart, SERIES_COLOURS, type LineSeries } from '../components/line-chart';
import { ErrorNotice, Loading } from '../components/notice';
import { TableWrap } from '../components/table-wrap';
import { Time } from '../components/time';
import type { DurationFigures, HealthGrouping, HealthReport, TargetRotation } from '../types';
import { useLoad } from '../use-load';

const RANGES = {
  '24h': { label: 'Last 24 hours', span: 86_400_000, bucket: 'hour' },
  '7d': { label: 'Last 7 days', span: 7 * 86_400_000, bucket: 'hour' },
  '30d': { label: 'Last 30 days', span: 30 * 86_400_000, bucket: 'day' },
} as const;
type RangeId = keyof typeof RANGES;
const STATS = { p50: 'p50 (median)', p95: 'p95', max: 'max (slowest)' } as const;
type Stat = keyof typeof STATS;
/** The groups drawn; the rest are in the table below the charts. */
const DRAWN = SERIES_COLOURS.length;
const BUCKET_MS = { hour: 3_600_000, day: 86_400_000 } as const;

function pick<T extends string>(value: string | undefined, choices: Record<T, unknown>, fallback: T): T {
  return value !== undefined && Object.hasOwn(choices, value) ? (value as T) : fallback;
}

export function HealthPage() {
  const location = useLocation();
  const range = pick<RangeId>(location.query.range, RANGES, '24h');
  const by = pick<HealthGrouping>(location.query.by, { model: 1, target: 1 }, 'model');
  const stat = pick<Stat>(location.query.stat, STATS, 'p95');
  const go = (change: Partial<{ range: RangeId; by: HealthGrouping; stat: Stat }>) => {
    const next = { range, by, stat, ...change };
    location.route(`/console/health?range=${next.range}&by=${next.by}&stat=${next.stat}`);
  };
  // From the start of the bucket the range begins in, so the first bucket is whole.
  const from = useMemo(() => {
    const { span, bucket } = RANGES[range];
    const start = Date.now() - span;
    return new Date(start - (start % BUCKET_MS[bucket])).toISOString();
  }, [range]);
  return (
    <>
      <PageHeading title="Health" />
      <p class="help">
        What clients saw, from the request log: time to the first byte of each answer, the whole answer's duration, and the share that ended in an error; per model or per upstream target. Times are
        per UTC {RANGES[range].bucket}.
      </p>
      <form role="search" aria-label="Health range" class="toolbar select-toolbar" onSubmit={(event) => event.preventDefault()}>
        <div class="field">
          <label for="health-range">Range</label>
          <select id="health-range" value={range} onChange={(event) => go({ range: event.currentTarget.value as RangeId })}>
            {Object.entries(RANGES).map(([id, choice]) => (
              <option key={id} value={id}>
                {choice.label}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="health-by">Per</label>
          <select id="health-by" value={by} onChange={(event) => go({ by: event.currentTarget.value as HealthGrouping })}>
            <option value="model">Model</option>
            <option value="target">Target</option>
          </select>
        </div>
        <div class="field">
          <label for="health-stat">Times shown</label>
          <select id="health-stat" value={stat} onChange={(event) => go({ stat: event.currentTarget.value as Stat })}>
            {Object.entries(STATS).map(([id, text]) => (
              <option key={id} value={id}>
                {text}
              </option>
            ))}
          </select>
        </div>
      </form>
      <HealthCharts from={from} bucket={RANGES[range].bucket} by={by} stat={stat} />
      <Rotations from={from} />
    </>
  );
}

const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumSignificantDigits: 3 });

/** A duration axis figure: `850 ms`, `1.5 s`, `2.5K s`. */
function durationFigure(tick: number): string {
  if (tick < 1_000) return Number.isInteger(tick) ? `${tick} ms` : '';
  return `${compact.format(tick / 1_000)} s`;
}

/** An error-rate axis figure, in percent. */
function rateFigure(tick: number): string {
  return `${compact.format(tick * 100)}%`;
}

function percent(rate: number): string {
  return `${(rate * 100).toFixed(rate === 0 || rate === 1 ? 0 : 1)}%`;
}

function milliseconds(figures: DurationFigures | null, stat: Stat): string {
  return figures === null ? '—' : `${figures[stat]} ms`;
}

interface Drawn {
  times: number[];
  firstByte: LineSeries[];
  duration: LineSeries[];
  errorRate: LineSeries[];
}

/** Every bucket of the range (seconds, as uPlot takes them) and, per drawn group, its figure in each (null where it had no requests). */
function drawn(report: HealthReport, groups: readonly string[], stat: Stat): Drawn {
  const step = BUCKET_MS[report.bucket];
  const first = Date.parse(report.from);
  const last = Date.parse(report.to);
  const times: number[] = [];
  for (let time = first - (first % step); time < last && times.length < 1_000; time += step) times.push(time / 1_000);
  const index = new Map(times.map((time, position) => [time, position]));
  const empty = () => groups.map((label) => ({ label, values: times.map((): number | null => null) }));
  const result = { times, firstByte: empty(), duration: empty(), errorRate: empty() };
  for (const row of report.rows) {
    const line = groups.indexOf(row.group);
    const position = index.get(Date.parse(row.bucket_start) / 1_000);
    if (line < 0 || position === undefined) continue;
    result.firstByte[line]!.values[position] = row.first_byte_ms?.[stat] ?? null;
    result.duration[line]!.values[position] = row.duration_ms[stat];
    result.errorRate[line]!.values[position] = row.error_rate;
  }
  return result;
}

function HealthCharts({ from, bucket, by, stat }: { from: string; bucket: 'hour' | 'day'; by: HealthGrouping; stat: Stat }) {
  const report = useLoad(() => api.healthReport({ from, bucket, by }), [from, bucket, by]);
  const data = report.data;
  const groups = useMemo(() => data?.groups.slice(0, DRAWN).map((group) => group.group) ?? [], [data]);
  const lines = useMemo(() => (data === undefined ? undefined : drawn(data, groups, stat)), [data, groups, stat]);
  const what = by === 'model' ? 'model' : 'target';
  return (
    <section aria-labelledby="health-charts-heading">
      <h2 id="health-charts-heading">Per {what}</h2>
      <ErrorNotice error={report.error} />
      {data === undefined || lines === undefined ? (
        report.loading ? <Loading what="the figures" /> : null
      ) : data.groups.length === 0 ? (
        <p>No requests in this range.</p>
      ) : (
        <>
          <ul class="plain chart-legend" aria-label="Lines">
            {groups.map((group, index) => (
              <li key={group}>
                <span class={`swatch swatch-${index}`} aria-hidden="true" />
                {group}
              </li>
            ))}
            {data.groups.length > DRAWN ? <li class="help">and {data.groups.length - DRAWN} more with fewer requests (in the table)</li> : null}
          </ul>
          <div class="charts">
            <figure class="chart-card">
              <figcaption>
                <span class="chart-title">Time to first byte</span> <span class="help">· {STATS[stat]}</span>
              </figcaption>
              <LineChart times={lines.times} series={lines.firstByte} figure={durationFigure} label={`Time to first byte per ${bucket}, ${STATS[stat]}, per ${what}`} />
            </figure>
            <figure class="chart-card">
              <figcaption>
                <span class="chart-title">Duration</span> <span class="help">· {STATS[stat]}</span>
              </figcaption>
              <LineChart times={lines.times} series={lines.duration} figure={durationFigure} label={`Duration per ${bucket}, ${STATS[stat]}, per ${what}`} />
            </figure>
            <figure class="chart-card">
              <figcaption>
                <span class="chart-title">Error rate</span>
              </figcaption>
              <LineChart times={lines.times} series={lines.errorRate} figure={rateFigure} label={`Error rate per ${bucket}, per ${what}`} />
            </figure>
          </div>
          <GroupTable report={data} stat={stat} />
        </>
      )}
    </section>
  );
}

/** Per group over the whole range: requests, errors, error rate; and its worst bucket's times. */
function GroupTable({ report, stat }: { report: HealthReport; stat: Stat }) {
  const worst = new Map<string, { firstByte: DurationFigures | null; duration: DurationFigures }>();
  for (const row of report.rows) {
    const seen = worst.get(row.group);
    const firstByte = seen?.firstByte === null || seen === undefined ? row.first_byte_ms : row.first_byte_ms !== null && row.first_byte_ms[stat] > seen.firstByte[stat] ? row.first_byte_ms : seen.firstByte;
    const duration = seen === undefined || row.duration_ms[stat] > seen.duration[stat] ? row.duration_ms : seen.duration;
    worst.set(row.group, { firstByte, duration });
  }
  const heading = report.by === 'model' ? 'Model' : 'Target';
  return (
    <TableWrap label={`Requests and errors per ${report.by}`}>
      <table>
        <thead>
          <tr>
            <th scope="col">{heading}</th>
            <th scope="col" class="number">Requests</th>
            <th scope="col" class="number">Errors</th>
            <th scope="col" class="number">Error rate</th>
            <th scope="col" class="number">Worst {report.bucket}: first byte ({stat})</th>
            <th scope="col" class="number">Worst {report.bucket}: duration ({stat})</th>
          </tr>
        </thead>
        <tbody>
          {report.groups.map((group) => (
            <tr key={group.group}>
              <td data-label={heading}>{group.group}</td>
              <td data-label="Requests" class="number">{group.requests}</td>
              <td data-label="Errors" class="number">{group.errors}</td>
              <td data-label="Error rate" class="number">{percent(group.error_rate)}</td>
              <td data-label={`Worst first byte (${stat})`} class="number">{milliseconds(worst.get(group.group)?.firstByte ?? null, stat)}</td>
              <td data-label={`Worst duration (${stat})`} class="number">{milliseconds(worst.get(group.group)?.duration ?? null, stat)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

/** `1 h 5 min`, `3 min 20 s`, `850 ms`. */
function outFor(milliseconds: number): string {
  if (milliseconds < 1_000) return `${milliseconds} ms`;
  const seconds = Math.round(milliseconds / 1_000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

function Rotations({ from }: { from: string }) {
  const rotations = useLoad(() => api.rotations({ from }), [from]);
  return (
    <section id="rotations" aria-labelledby="rotations-heading">
      <h2 id="rotations-heading">Out of rotation and back</h2>
      <p class="help">Each gateway process keeps its own view of target health, so each outage is listed as the process that saw it.</p>
      <ErrorNotice error={rotations.error} />
      {rotations.data === undefined ? (
        rotations.loading ? <Loading what="the rotation history" /> : null
      ) : rotations.data.data.length === 0 ? (
        <p>No target was taken out of rotation in this range.</p>
      ) : (
        <TableWrap label="Targets out of rotation and back">
          <table>
            <thead>
              <tr>
                <th scope="col">Target</th>
                <th scope="col">Out of rotation</th>
                <th scope="col">Back</th>
                <th scope="col" class="number">Out for</th>
                <th scope="col">Why</th>
                <th scope="col">Instance</th>
              </tr>
            </thead>
            <tbody>
              {rotations.data.data.map((rotation: TargetRotation) => (
                <tr key={rotation.id}>
                  <td data-label="Target">
                    {rotation.target}
                    {rotation.scope === 'provider' ? <span class="help"> (whole provider)</span> : null}
                  </td>
                  <td data-label="Out of rotation">
                    <Time iso={rotation.out_at} />
                  </td>
                  <td data-label="Back">{rotation.back_at === null ? <strong>Still out</strong> : <Time iso={rotation.back_at} />}</td>
                  <td data-label="Out for" class="number">{rotation.out_ms === null ? '—' : outFor(rotation.out_ms)}</td>
                  <td data-label="Why">{reasonText(rotation)}</td>
                  <td data-label="Instance">
                    <code>{rotation.instance}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  );
}

function reasonText(rotation: TargetRotation): string {
  if (rotation.scope === 'provider') return `Its provider refused our key${rotation.reason === null ? '' : ` (${rotation.reason})`}`;
  if (rotation.reason === null) return 'Failures in a row';
  return `Failures in a row (last: ${rotation.reason})`;
}
