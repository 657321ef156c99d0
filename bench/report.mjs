/**
 * Turns the benchmark's results into Markdown tables (printed, and saved beside the JSON) and
 * checks the targets of the "Scale out" issue against them.
 */

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const fmtInt = (value) => (Number.isFinite(value) ? integer.format(value) : 'n/a');
const fmtMs = (value) => (Number.isFinite(value) ? value.toFixed(2) : 'n/a');
const fmtSigned = (value) => (Number.isFinite(value) ? `${value >= 0 ? '+' : ''}${value.toFixed(2)}` : 'n/a');
const fmtMb = (bytes) => (Number.isFinite(bytes) ? (bytes / 1_048_576).toFixed(1) : 'n/a');

const table = (header, rows) => [`| ${header.join(' | ')} |`, `|${header.map((cell, index) => (index === 0 || /target|scenario|what/i.test(cell) ? '---' : '---:')).join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');

/** The run of `target` for a scenario and concurrency, if any. */
export function findRun(results, scenario, concurrency, target) {
  return results.runs.find((run) => run.scenario === scenario && run.concurrency === concurrency && run.target === target);
}

/** p50/p99 added over the direct run of the same scenario and concurrency. */
export function addedLatency(results, run) {
  const direct = findRun(results, run.scenario, run.concurrency, 'direct');
  if (direct === undefined || run.target === 'direct') return { p50: NaN, p99: NaN };
  return { p50: run.latencyMs.p50 - direct.latencyMs.p50, p99: run.latencyMs.p99 - direct.latencyMs.p99 };
}

/** The targets, each with its measured value and whether it is met. */
export function checkTargets(results) {
  const checks = [];
  const one = 'tollgate-1';
  const ratioCheck = (what, scenario) => {
    const tollgate = findRun(results, scenario, 16, one);
    const bare = findRun(results, scenario, 16, 'bare-proxy');
    if (tollgate === undefined || bare === undefined) return;
    const ratio = tollgate.rps / bare.rps;
    checks.push({ what, scenario, value: `${fmtInt(tollgate.rps)} vs ${fmtInt(bare.rps)} req/s = ${(ratio * 100).toFixed(0)}%`, limit: '≥ 50%', met: ratio >= 0.5 });
  };
  ratioCheck('1 worker throughput at c16 vs bare proxy', 'chat');
  ratioCheck('1 worker throughput at c16 vs bare proxy', 'responses');
  ratioCheck('1 worker stream rate at c16 vs bare proxy', 'chat-stream');
  // The request log (issue 10): at most 5% fewer requests per second with it on.
  for (const scenario of results.scenarios) {
    const on = findRun(results, scenario, 16, one);
    const off = findRun(results, scenario, 16, 'tollgate-1-nolog');
    if (on === undefined || off === undefined) continue;
    const ratio = on.rps / off.rps;
    checks.push({ what: 'request log on vs off, 1 worker, c16', scenario, value: `${fmtInt(on.rps)} vs ${fmtInt(off.rps)} req/s = ${(ratio * 100).toFixed(1)}%`, limit: '≥ 95%', met: ratio >= 0.95 });
  }
  for (const scenario of results.scenarios) {
    const run = findRun(results, scenario, 16, one);
    if (run !== undefined) checks.push({ what: 'CPU per request, 1 worker, c16', scenario, value: `${fmtInt(run.cpuPerRequestMicros)} µs`, limit: '< 150 µs', met: run.cpuPerRequestMicros < 150 });
  }
  for (const scenario of results.scenarios) {
    const run = findRun(results, scenario, 1, one);
    if (run !== undefined) {
      const added = addedLatency(results, run).p50;
      checks.push({ what: 'added p50 at c1', scenario, value: `${fmtMs(added)} ms`, limit: '< 0.3 ms', met: added < 0.3 });
    }
  }
  for (const scenario of results.scenarios) {
    const run = findRun(results, scenario, 16, one);
    if (run !== undefined) {
      const added = addedLatency(results, run).p99;
      checks.push({ what: 'added p99 at c16', scenario, value: `${fmtMs(added)} ms`, limit: '< 3 ms', met: added < 3 });
    }
  }
  const streams = results.streams?.find((entry) => entry.target === one);
  if (streams !== undefined && streams.perStreamBytes !== undefined) {
    const all = streams.opened === streams.requested;
    checks.push({
      what: `RSS per open stream (${fmtInt(streams.opened)} of ${fmtInt(streams.requested)} open)`,
      scenario: 'slow chat-stream',
      value: `${(streams.perStreamBytes / 1024).toFixed(1)} KB`,
      limit: '< 30 KB, all open',
      met: all && streams.perStreamBytes < 30 * 1024,
    });
  }
  return checks;
}

/** The whole report as Markdown. */
export function renderMarkdown(results) {
  const parts = [];
  const m = results.machine;
  parts.push(`Machine: ${m.cpus} × ${m.cpuModel}, ${fmtMb(m.memoryBytes)} MB RAM, Linux ${m.kernel}, Node ${m.node}, open files limit ${m.openFilesLimit}; other processes kept ${m.backgroundCores?.toFixed(2) ?? '?'} CPUs busy before the start. ` +
    `Run ${results.startedAt}, ${results.settings.warmupMs} ms warm-up + ${results.settings.durationMs} ms measured per cell, total ${results.totalSeconds?.toFixed(0) ?? '?'} s.`);
  for (const [target, reason] of Object.entries(results.unavailable)) parts.push(`\n**${target}: not available** (${reason})`);

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
  if (checks.length > 0) {
    const rows = checks.map((check) => [check.what, check.scenario, check.value, check.limit, check.met ? 'met' : '**not met**']);
    parts.push(`\n#### Targets\n\n${table(['what', 'scenario', 'measured', 'target', 'result'], rows)}`);
  }
  return `${parts.join('\n')}\n`;
}

/** Rows comparing the one-worker gateway with tracing off and on, cell by cell. */
function tracingCost(results) {
  const rows = [];
  for (const scenario of results.scenarios) {
    for (const concurrency of results.settings.concurrencies) {
      const off = findRun(results, scenario, concurrency, 'tollgate-1');
      const on = findRun(results, scenario, concurrency, 'tollgate-1-traced');
      if (off === undefined || on === undefined) continue;
      const change = ((on.rps - off.rps) / off.rps) * 100;
      rows.push([scenario, String(concurrency), fmtInt(off.rps), fmtInt(on.rps), `${change >= 0 ? '+' : ''}${change.toFixed(1)}%`, fmtInt(off.cpuPerRequestMicros), fmtInt(on.cpuPerRequestMicros), fmtMs(off.latencyMs.p50), fmtMs(on.latencyMs.p50), fmtMs(off.latencyMs.p99), fmtMs(on.latencyMs.p99)]);
    }
  }
  return rows;
}
