/**
 * Turns the benchmark's results into Markdown tables (printed, and saved beside the JSON), ending
 * with the targets' table (targets.mjs checks them): a row per measurement, a verdict per issue.
 */
import { addedLatency, checkTargets, cpuSplit, findRun, fmtCores, fmtInt, fmtMb, fmtMs, fmtSigned, tally } from './targets.mjs';

const table = (header, rows) => [`| ${header.join(' | ')} |`, `|${header.map((cell, index) => (index === 0 || /target|scenario|what/i.test(cell) ? '---' : '---:')).join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');

/** The whole report as Markdown. */
export function renderMarkdown(results) {
  const parts = [];
  const m = results.machine;
  parts.push(`Machine: ${m.cpus} × ${m.cpuModel}, ${fmtMb(m.memoryBytes)} MB RAM, Linux ${m.kernel}, Node ${m.node}, open files limit ${m.openFilesLimit}; other processes kept ${m.backgroundCores?.toFixed(2) ?? '?'} CPUs busy before the start. ` +
    `Run ${results.startedAt}, ${results.settings.warmupMs} ms warm-up + ${results.settings.durationMs} ms measured per cell, total ${results.totalSeconds?.toFixed(0) ?? '?'} s.`);
  for (const [target, reason] of Object.entries(results.unavailable)) parts.push(`\n**${target}: not available** (${reason})`);
  const leftOut = Object.entries(results.leftOut ?? {}).map(([target, flag]) => `${target} (${flag})`);
  if (leftOut.length > 0) parts.push(`\nLeft out of this run: ${leftOut.join(', ')}.`);

  for (const scenario of results.scenarios) {
    const rows = [];
    if (!results.runs.some((run) => run.scenario === scenario)) continue;
    for (const concurrency of results.settings.concurrencies) {
      for (const target of results.targets) {
        const run = findRun(results, scenario, concurrency, target);
        if (run === undefined) continue;
        const added = addedLatency(results, run);
        rows.push([String(concurrency), target, fmtInt(run.rps), fmtMs(run.latencyMs.p50), fmtMs(run.latencyMs.p99), fmtSigned(added.p50), fmtSigned(added.p99), fmtInt(run.cpuPerRequestMicros), Number.isFinite(run.otherCores) ? run.otherCores.toFixed(2) : 'n/a', String(run.errors)]);
      }
    }
    parts.push(`\n#### ${scenario}\n\n${table(['conc.', 'target', 'req/s', 'p50 ms', 'p99 ms', 'added p50', 'added p99', 'CPU µs/req', 'other CPUs busy', 'errors'], rows)}`);
  }

  const tracingRows = tracingCost(results);
  if (tracingRows.length > 0) {
    parts.push(`\n#### Tracing: one worker with OpenTelemetry off (tollgate-1) and on (tollgate-1-traced)\n\n${table(['scenario', 'conc.', 'req/s off', 'req/s on', 'req/s change', 'CPU µs/req off', 'CPU µs/req on', 'p50 ms off', 'p50 ms on', 'p99 ms off', 'p99 ms on'], tracingRows)}`);
  }

  const baselineRows = pairRows(results, 'tollgate-1-baseline', 'tollgate-1');
  if (baselineRows.length > 0) {
    parts.push(`\n#### This build (tollgate-1) beside the --baseline build (tollgate-1-baseline), one worker each, same cells\n\n${table(['scenario', 'conc.', 'req/s baseline', 'req/s this', 'req/s change', 'CPU µs/req baseline', 'CPU µs/req this', 'p50 ms baseline', 'p50 ms this', 'p99 ms baseline', 'p99 ms this'], baselineRows)}`);
  }

  const workerRows = workerTable(results);
  if (workerRows.rows.length > 0) parts.push(`\n#### Workers on SQLite against one (this machine: ${m.cpus} CPUs)\n\n${table(workerRows.header, workerRows.rows)}`);

  const splitRows = cpuSplitRows(results);
  if (splitRows.length > 0) {
    parts.push(`\n#### Where the CPUs went in the PostgreSQL + Redis cells (this machine: ${m.cpus} CPUs; CPUs busy on average)\n\n` +
      'PostgreSQL counts its server processes and the backends of this run\'s databases; Redis is counted whole. tollgate-1 (SQLite) is shown beside them, its PostgreSQL and Redis in *other*.\n\n' +
      table(['scenario', 'conc.', 'target', 'req/s', 'gateways', 'PostgreSQL', 'Redis', 'load generator + mock', 'interrupts', 'other', 'busy'], splitRows));
  }

  const rssRows = Object.entries(results.peakRssBytes).map(([target, bytes]) => [target, fmtMb(bytes)]);
  parts.push(`\n#### Peak RSS during the runs above\n\n${table(['target', 'peak RSS MB'], rssRows)}`);

  if (results.streams !== undefined && results.streams.length > 0) {
    const rows = results.streams.map((entry) => [
      entry.target,
      `${fmtInt(entry.opened)} / ${fmtInt(entry.requested)}`,
      entry.openSeconds === undefined ? 'n/a' : entry.openSeconds.toFixed(1),
      fmtMb(entry.idleRssBytes),
      fmtMb(entry.openRssBytes),
      entry.perStreamBytes === undefined ? 'n/a' : (entry.perStreamBytes / 1024).toFixed(1),
      fmtMb(entry.laterRssBytes),
      Number.isFinite(entry.heldCores) ? entry.heldCores.toFixed(2) : 'n/a',
      entry.note ?? '',
    ]);
    parts.push(`\n#### Slow streams held open at once\n\n${table(['target', 'open', 'seconds to open', 'idle RSS MB', 'RSS open MB', 'KB per stream', 'RSS 4 s later MB', 'CPUs busy holding them', 'note'], rows)}`);
  }

  const checks = checkTargets(results);
  const issuesText = (issues) => `${issues.length > 1 ? 'issues' : 'issue'} ${issues.join(', ')}`;
  const outcome = (met) => (met === undefined ? 'not measured' : met ? 'met' : '**not met**');
  const rows = checks.map(({ what, scenario, value, verdicts }) => [
    what,
    scenario,
    value,
    verdicts.map((verdict) => `${verdict.limit} (${issuesText(verdict.issues)})`).join('; '),
    verdicts.length === 1 ? outcome(verdicts[0].met) : verdicts.map((verdict) => `${outcome(verdict.met)} (${verdict.issues.join(', ')})`).join('; '),
  ]);
  const counts = Object.entries(tally(checks)).sort(([left], [right]) => Number(left) - Number(right)).map(([issue, count]) => `issue ${issue}: ${count.met} met, ${count.notMet} not met, ${count.notMeasured} not measured`);
  parts.push(`\n#### Targets (issues 9, 10 and 22)\n\n${counts.join('; ')}.\n\n${table(['what', 'scenario', 'measured', 'target', 'result'], rows)}`);
  return `${parts.join('\n')}\n`;
}

/** req/s of every SQLite gateway by worker count, cell by cell, each beside one worker's. */
function workerTable(results) {
  const counts = results.settings.workerCounts.filter((count) => count > 1 && results.targets.includes(`tollgate-${count}`));
  const header = ['scenario', 'conc.', '1 worker req/s', ...counts.map((count) => `${count} workers req/s (÷ 1)`)];
  const rows = [];
  if (counts.length === 0) return { header, rows };
  for (const scenario of results.scenarios) {
    for (const concurrency of results.settings.concurrencies) {
      const one = findRun(results, scenario, concurrency, 'tollgate-1');
      const many = counts.map((count) => findRun(results, scenario, concurrency, `tollgate-${count}`));
      if (one === undefined || many.every((run) => run === undefined)) continue;
      rows.push([scenario, String(concurrency), fmtInt(one.rps), ...many.map((run) => (run === undefined ? 'n/a' : `${fmtInt(run.rps)} (${((run.rps / one.rps) * 100).toFixed(0)}%)`))]);
    }
  }
  return { header, rows };
}

/** The CPU split (targets.mjs cpuSplit) of every cell of a target on PostgreSQL + Redis, and of tollgate-1 in the same cells. */
function cpuSplitRows(results) {
  const rows = [];
  for (const scenario of results.scenarios) {
    for (const concurrency of results.settings.concurrencies) {
      const cellRuns = results.runs.filter((run) => run.scenario === scenario && run.concurrency === concurrency);
      if (!cellRuns.some((run) => run.services === true)) continue;
      for (const run of cellRuns.filter((item) => item.services === true || item.target === 'tollgate-1')) {
        const split = cpuSplit(run);
        rows.push([scenario, String(concurrency), run.instances > 1 ? `${run.target} (${run.instances} instances)` : run.target, fmtInt(run.rps), ...[split.gateways, split.postgres, split.redis, split.loadAndMock, split.interrupts, split.other].map(fmtCores), `${fmtCores(split.busy)} of ${results.machine.cpus}`]);
      }
    }
  }
  return rows;
}

/** Rows comparing the one-worker gateway with tracing off and on, cell by cell. */
function tracingCost(results) {
  return pairRows(results, 'tollgate-1', 'tollgate-1-traced');
}

/**
 * Rows setting target `on` beside target `off`, cell by cell: req/s of each and the change from
 * `off` to `on`, then CPU per request, p50 and p99 of each.
 */
function pairRows(results, offTarget, onTarget) {
  const rows = [];
  for (const scenario of results.scenarios) {
    for (const concurrency of results.settings.concurrencies) {
      const off = findRun(results, scenario, concurrency, offTarget);
      const on = findRun(results, scenario, concurrency, onTarget);
      if (off === undefined || on === undefined) continue;
      const change = ((on.rps - off.rps) / off.rps) * 100;
      rows.push([scenario, String(concurrency), fmtInt(off.rps), fmtInt(on.rps), `${change >= 0 ? '+' : ''}${change.toFixed(1)}%`, fmtInt(off.cpuPerRequestMicros), fmtInt(on.cpuPerRequestMicros), fmtMs(off.latencyMs.p50), fmtMs(on.latencyMs.p50), fmtMs(off.latencyMs.p99), fmtMs(on.latencyMs.p99)]);
    }
  }
  return rows;
}
