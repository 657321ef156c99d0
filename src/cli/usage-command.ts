/** `tollgate usage`: requests, tokens and cost per model. */
import type { Command } from 'commander';
import { parseIsoDate } from '../admin/input.js';
import { usageReport, type UsageTotals } from '../admin/usage.js';
import { usageReportView } from '../admin/views.js';
import { formatUsd } from '../billing/money.js';
import type { CommandContext } from './program.js';
import { formatTable } from './table.js';

export function registerUsageCommand(program: Command, context: CommandContext): void {
  program
    .command('usage')
    .description('requests, tokens and cost per model')
    .option('--account <account>', 'only this account (id or name)')
    .option('--since <iso>', 'only usage at or after this ISO 8601 date or date-time')
    .action(
      context.storeAction(async (store, command) => {
        const options = command.opts<{ account?: string; since?: string }>();
        const report = await usageReport(store, {
          accountRef: options.account,
          since: options.since === undefined ? undefined : parseIsoDate(options.since, '--since'),
        });
        const text =
          report.rows.length === 0
            ? 'No usage recorded.'
            : formatTable(
                [
                  { header: 'MODEL' },
                  ...['REQUESTS', 'INPUT', 'CACHED', 'CACHE WRITE', 'OUTPUT', 'REASONING', 'COST USD', 'EXCESS USD'].map((header) => ({
                    header,
                    align: 'right' as const,
                  })),
                ],
                [...report.rows.map((row) => [row.model, ...totalsCells(row)]), ['TOTAL', ...totalsCells(report.total)]],
              );
        return { json: usageReportView(report), text };
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
  ].map(String).concat(formatUsd(totals.costNanos), formatUsd(totals.excessNanos));
}
