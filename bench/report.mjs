/**
 * Turns the benchmark's results into Markdown tables (printed, and saved beside the JSON) and
 * checks the targets of issue 9 ("The request path at the floor") against them. Every target gets
 * a row, met, not met, or not measured (with the reason: a scenario, concurrency or gateway left out
 * of the run, or not available); all at c16 on the one-worker gateway on SQLite unless said:
 *
 * - throughput against the bare undici proxy of the same run: chat and responses ≥ 60% of its
 *   req/s, chat-stream ≥ 50%;
 * - CPU per request: chat ≤ 100 µs, chat-stream ≤ 150 µs; responses is held to the chat limit
 *   (the issue names none for it);
 * - added latency (over `direct`, the mock alone; the bare proxy's is shown beside it): p50 ≤ 0.3 ms
 *   at c1, p99 ≤ 3 ms at c16, each pass-through scenario;
 * - memory: ≤ 20 KB RSS per open slow stream with 5,000 open (all of them), and flat while they run:
 *   RSS 4 s later at most 2 KB per stream (a tenth of the budget) above RSS once they are open;
 * - `--workers N` (tollgate-N, N > 1) no slower than tollgate-1: req/s at c16 and c64, each scenario;
 * - PostgreSQL + Redis, one instance (tollgate-1-pg): ≥ 70% of tollgate-1's req/s, each scenario;
 * - translated routes (responses-via-chat, responses-via-anthropic): CPU per request ≤ 2× that of
 *   pass-through responses;
 * - the request log (issue 10): at most 5% fewer req/s with it on (tollgate-1 vs tollgate-1-nolog).
 */

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const fmtInt = (value) => (Number.isFinite(value) ? integer.format(value) : 'n/a');
const fmtMs = (value) => (Number.isFinite(value) ? value.toFixed(2) : 'n/a');
const fmtSigned = (value) => (Number.isFinite(value) ? `${value >= 0 ? '+' : ''}${value.toFixed(2)}` : 'n/a');
const fmtMb = (bytes) => (Number.isFinite(bytes) ? (bytes / 1_048_576).toFixed(1) : 'n/a');
const fmtKb = (bytes) => (Number.isFinite(bytes) ? (bytes / 1024).toFixed(1) : 'n/a');
const fmtPercent = (ratio) => `${(ratio * 100).toFixed(0)}%`;

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

const ONE = 'tollgate-1';
/** The scenarios issue 9's targets name; `embeddings` came later and has a table but no target. */
const PASS_THROUGH = ['chat', 'chat-stream', 'responses'];
const TRANSLATED = ['responses-via-chat', 'responses-via-anthropic'];
/** Per scenario: the share of the bare proxy's req/s and the CPU per request the issue asks for. */
const LIMITS = {
  chat: { share: 0.6, cpuMicros: 100 },
  'chat-stream': { share: 0.5, cpuMicros: 150 },
  responses: { share: 0.6, cpuMicros: 100, cpuNote: ' (chat\'s)' },
};
const STREAMS_TARGET = { count: 5_000, perStreamBytes: 20 * 1024, growthPerStreamBytes: 2 * 1024 };

/**
 * The runs of `targets` for one cell: `{ runs }`, or `{ missing }` saying why one is not there (a
 * target not available or left out, a scenario or concurrency not in this run).
 */
function cell(results, scenario, concurrency, targets) {
  const runs = [];
  for (const target of targets) {
    const run = findRun(results, scenario, concurrency, target);
    if (run !== undefined && run.completed > 0) {
      runs.push(run);
      continue;
    }
    if (results.unavailable?.[target] !== undefined) return { missing: `${target} not available (the reason is above the tables)` };
    if (results.leftOut?.[target] !== undefined) return { missing: `${target} left out (${results.leftOut[target]})` };
    if (!results.scenarios.includes(scenario)) return { missing: `${scenario} not in this run (--scenarios)` };
    if (!results.settings.concurrencies.includes(concurrency)) return { missing: `c${concurrency} not in this run (--concurrency)` };
    if (!results.targets.includes(target)) return { missing: `${target} not in this run` };
    return { missing: run === undefined ? `no ${target} run at c${concurrency} (the run stopped early?)` : `${target} completed no request at c${concurrency}` };
  }
  return { runs };
}

/** The targets, each `{ what, scenario, value, limit, met }`; `met` is undefined when not measured. */
export function checkTargets(results) {
  const checks = [];
  const add = (what, scenario, limit, found, measure) => {
    if (found.missing !== undefined) checks.push({ what, scenario, value: found.missing, limit, met: undefined });
    else checks.push({ what, scenario, limit, ...measure(...found.runs) });
  };

  for (const scenario of PASS_THROUGH) {
    const { share } = LIMITS[scenario];
    add('1 worker req/s vs bare proxy, c16', scenario, `≥ ${fmtPercent(share)}`, cell(results, scenario, 16, [ONE, 'bare-proxy']), (tollgate, bare) => {
      const ratio = tollgate.rps / bare.rps;
      return { value: `${fmtInt(tollgate.rps)} vs ${fmtInt(bare.rps)} req/s = ${fmtPercent(ratio)}`, met: ratio >= share };
    });
  }
  for (const scenario of PASS_THROUGH) {
    const { cpuMicros, cpuNote = '' } = LIMITS[scenario];
    add('CPU per request, 1 worker, c16', scenario, `≤ ${cpuMicros} µs${cpuNote}`, cell(results, scenario, 16, [ONE, 'bare-proxy']), (tollgate, bare) => ({
      value: `${fmtInt(tollgate.cpuPerRequestMicros)} µs (bare proxy ${fmtInt(bare.cpuPerRequestMicros)})`,
      met: tollgate.cpuPerRequestMicros <= cpuMicros,
    }));
  }
  const latency = (what, concurrency, quantile, limitMs) => {
    for (const scenario of PASS_THROUGH) {
      add(what, scenario, `≤ ${limitMs} ms`, cell(results, scenario, concurrency, [ONE, 'bare-proxy', 'direct']), (tollgate, bare) => {
        const added = addedLatency(results, tollgate)[quantile];
        return { value: `${fmtSigned(added)} ms (bare proxy ${fmtSigned(addedLatency(results, bare)[quantile])})`, met: added <= limitMs };
      });
    }
  };
  latency('added p50 at c1 (over the mock alone)', 1, 'p50', 0.3);
  latency('added p99 at c16 (over the mock alone)', 16, 'p99', 3);

  checks.push(...streamChecks(results));

  const many = `tollgate-${results.settings.allWorkers}`;
  for (const scenario of PASS_THROUGH) {
    for (const concurrency of [16, 64]) {
      const target = results.settings.allWorkers > 1 ? cell(results, scenario, concurrency, [many, ONE]) : { missing: 'no multi-worker gateway in this run (--workers 1)' };
      add(`${results.settings.allWorkers > 1 ? many : 'tollgate-N'} req/s vs 1 worker, c${concurrency}`, scenario, '≥ 100%', target, (workers, one) => {
        const ratio = workers.rps / one.rps;
        return { value: `${fmtInt(workers.rps)} vs ${fmtInt(one.rps)} req/s = ${fmtPercent(ratio)}`, met: ratio >= 1 };
      });
    }
  }

  for (const scenario of PASS_THROUGH) {
    add('PostgreSQL + Redis (tollgate-1-pg) req/s vs SQLite, c16', scenario, '≥ 70%', cell(results, scenario, 16, ['tollgate-1-pg', ONE]), (pg, sqlite) => {
      const ratio = pg.rps / sqlite.rps;
      return { value: `${fmtInt(pg.rps)} vs ${fmtInt(sqlite.rps)} req/s = ${fmtPercent(ratio)} (CPU ${fmtInt(pg.cpuPerRequestMicros)} vs ${fmtInt(sqlite.cpuPerRequestMicros)} µs/req)`, met: ratio >= 0.7 };
    });
  }

  for (const scenario of TRANSLATED) {
    const route = cell(results, scenario, 16, [ONE]);
    const passThrough = cell(results, 'responses', 16, [ONE]);
    const found = route.missing !== undefined ? route : passThrough.missing !== undefined ? { missing: `pass-through responses: ${passThrough.missing}` } : { runs: [...route.runs, ...passThrough.runs] };
    add('translated route CPU per request vs pass-through responses, 1 worker, c16', scenario, '≤ 2×', found, (translated, passThroughRun) => {
      const ratio = translated.cpuPerRequestMicros / passThroughRun.cpuPerRequestMicros;
      return { value: `${fmtInt(translated.cpuPerRequestMicros)} vs ${fmtInt(passThroughRun.cpuPerRequestMicros)} µs = ${ratio.toFixed(2)}× (${fmtInt(translated.rps)} req/s)`, met: ratio <= 2 };
    });
  }

  for (const scenario of PASS_THROUGH) {
    add('request log on vs off (tollgate-1-nolog) req/s, c16', scenario, '≥ 95%', cell(results, scenario, 16, [ONE, 'tollgate-1-nolog']), (on, off) => {
      const ratio = on.rps / off.rps;
      return { value: `${fmtInt(on.rps)} vs ${fmtInt(off.rps)} req/s = ${(ratio * 100).toFixed(1)}%`, met: ratio >= 0.95 };
    });
  }
  return checks;
}

/** The memory targets, from the slow streams held open by the one-worker gateway. */
function streamChecks(results) {
  const what = `RSS per open stream, ${fmtInt(STREAMS_TARGET.count)} open`;
  const flat = 'RSS growth while they run (4 s later − open), per stream';
  const entry = results.streams?.find((item) => item.target === ONE);
  const missing = results.settings.streamCount === 0 ? 'streams not in this run (--no-streams)' : entry === undefined ? 'no stream measurement (the run stopped early?)' : entry.perStreamBytes === undefined ? `not measured: ${entry.note ?? 'no stream opened'}` : undefined;
  if (missing !== undefined) {
    return [
      { what, scenario: 'slow chat-stream', value: missing, limit: '≤ 20 KB, all open', met: undefined },
      { what: flat, scenario: 'slow chat-stream', value: missing, limit: '≤ 2 KB', met: undefined },
    ];
  }
  const bare = results.streams.find((item) => item.target === 'bare-proxy');
  const fewer = entry.requested < STREAMS_TARGET.count ? `; ${fmtInt(entry.requested)} requested, the target is for ${fmtInt(STREAMS_TARGET.count)}` : '';
  const allOpen = entry.opened === entry.requested;
  const growth = (item) => (item?.laterRssBytes - item?.openRssBytes) / item?.opened;
  return [
    {
      what,
      scenario: 'slow chat-stream',
      value: `${fmtKb(entry.perStreamBytes)} KB, ${fmtInt(entry.opened)} of ${fmtInt(entry.requested)} open${fewer} (bare proxy ${fmtKb(bare?.perStreamBytes)} KB)`,
      limit: '≤ 20 KB, all open',
      met: allOpen && entry.requested >= STREAMS_TARGET.count && entry.perStreamBytes <= STREAMS_TARGET.perStreamBytes,
    },
    {
      what: flat,
      scenario: 'slow chat-stream',
      value: `${fmtSigned(growth(entry) / 1024)} KB (${fmtMb(entry.openRssBytes)} → ${fmtMb(entry.laterRssBytes)} MB; bare proxy ${fmtSigned(growth(bare) / 1024)} KB)`,
      limit: '≤ 2 KB',
      met: Number.isFinite(growth(entry)) && growth(entry) <= STREAMS_TARGET.growthPerStreamBytes,
    },
  ];
}

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
  const rows = checks.map((check) => [check.what, check.scenario, check.value, check.limit, check.met === undefined ? 'not measured' : check.met ? 'met' : '**not met**']);
  const count = (met) => checks.filter((check) => check.met === met).length;
  parts.push(`\n#### Targets (issue 9; the request log's from issue 10)\n\n${count(true)} met, ${count(false)} not met, ${count(undefined)} not measured.\n\n${table(['what', 'scenario', 'measured', 'target', 'result'], rows)}`);
  return `${parts.join('\n')}\n`;
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
