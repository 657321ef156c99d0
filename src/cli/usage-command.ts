/** `tollgate usage`: requests, tokens, errors and cost per model, key, endpoint, UTC day or hour, over a time range. */
import { Option, type Command } from 'commander';
import { parseIsoDate } from '../admin/input.js';
import type { UsageTotals } from '../admin/results.js';
import { USAGE_GROUPINGS, usageReport } from '../admin/usage.js';
import { usageCsv, usageReportView } from '../admin/views.js';
import { formatUsd } from '../billing/money.js';
import type { UsageGrouping } from '../store/store.js';
import type { CommandContext } from './command-context.js';
import { formatTable } from './table.js';

interface UsageOptions {
  account?: string;
  since?: string;
  until?: string;
  by: UsageGrouping;
  csv?: boolean;
}

export function registerUsageCommand(program: Command, context: CommandContext): void {
  program
    .command('usage')
    .description('requests, tokens, errors and cost per model, key, endpoint, UTC day or hour')
    .option('--account <account>', 'only this account (id or name)')
    .option('--since <iso>', 'only usage at or after this ISO 8601 date or date-time')
    .option('--until <iso>', 'only usage before this ISO 8601 date or date-time')
    .addOption(new Option('--by <grouping>', 'one row per').choices([...USAGE_GROUPINGS]).default('model'))
    .option('--csv', 'print CSV (the admin API export) instead of a table')
    .action(
      context.storeAction(async (store, command) => {
        const options = command.opts<UsageOptions>();
        const report = await usageReport(store, {
          accountRef: options.account,
          from: options.since === undefined ? undefined : parseIsoDate(options.since, '--since'),
          to: options.until === undefined ? undefined : parseIsoDate(options.until, '--until'),
          by: options.by,
          names: ['--since', '--until'],
        });
        const view = usageReportView(report);
        if (options.csv === true) return { json: view, text: usageCsv(view).replace(/\r\n$/, '') };
        const text =
          report.rows.length === 0
            ? 'No usage recorded.'
            : formatTable(
                [
                  { header: options.by.toUpperCase() },
                  ...['REQUESTS', 'INPUT', 'CACHED', 'CACHE WRITE', 'OUTPUT', 'REASONING', 'ERRORS', 'COST USD', 'EXCESS USD'].map((header) => ({
                    header,
                    align: 'right' as const,
                  })),
                ],
                [...report.rows.map((row) => [row.group, ...totalsCells(row)]), ['TOTAL', ...totalsCells(report.total)]],
              );
        return { json: view, text };
      }),
    );
}

function totalsCells(totals: UsageTotals): string[] {
  return [
    totals.requests,
    totals.inputTokens,
    totals.cachedInputTokens,
    totals.cacheWriteInputTokens ?? 0,
    totals.outputTokens,
    totals.reasoningTokens,
    totals.errors,
  ].map(String).concat(formatUsd(totals.costNanos), formatUsd(totals.excessNanos));
}
