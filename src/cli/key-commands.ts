/**
 * `tollgate keys create | list | get | update | disable | enable | rotate | delete`, on the same
 * services as the admin API's `/keys` routes. Secrets are printed once: at creation and rotation.
 */
import type { Command } from 'commander';
import { CLI_ACTOR } from '../admin/audit.js';
import { parseIsoDate, parsePositiveInteger } from '../admin/input.js';
import {
  createKey,
  deleteKey,
  getKey,
  listKeys,
  rotateKey,
  setKeyDisabled,
  updateKey,
  type KeyBudgetInput,
  type KeyUpdateInput,
} from '../admin/keys.js';
import { keyStatus, KEY_STATUSES, parseKeyStatus } from '../admin/key-status.js';
import type { KeyDetails } from '../admin/results.js';
import { AdminError } from '../admin/admin-error.js';
import { keyDetailsView, keyView } from '../admin/views.js';
import { formatUsd } from '../billing/money.js';
import type { ApiKeyRecord } from '../store/store.js';
import type { CommandContext } from './command-context.js';
import { formatTable, formatTimestamp } from './table.js';

interface SettingsOptions {
  name?: string;
  models?: string;
  rpm?: string;
  tpm?: string;
  expires?: string;
  budget?: string;
  budgetPeriod?: string;
}

const PERIOD_HELP = 'total (never resets), day, week (from Monday) or month, calendar UTC';

export function registerKeyCommands(program: Command, context: CommandContext): void {
  const keys = program.command('keys').description('create, list, change, rotate, disable and delete API keys');

  keys
    .command('create')
    .description('create an API key; its secret is shown once')
    .requiredOption('--account <account>', 'account id or name')
    .option('--name <name>', 'a label for the key')
    .option('--models <ids>', 'comma-separated model ids the key may use (default: all)')
    .option('--rpm <count>', 'requests per rate-limit window (default: the configured limit)')
    .option('--tpm <count>', 'tokens per minute (default: the configured limit)')
    .option('--expires <iso>', 'expiry as an ISO 8601 date or date-time (default: never)')
    .option('--budget <usd>', 'spend limit in USD (default: none)')
    .option('--budget-period <period>', `${PERIOD_HELP} (default: total)`)
    .action(
      context.storeAction(async (store, command) => {
        const options = command.opts<SettingsOptions & { account: string }>();
        const { key, secret } = await createKey(store, {
          accountRef: options.account,
          name: options.name,
          models: options.models?.split(','),
          requestsPerWindow: options.rpm === undefined ? undefined : parsePositiveInteger(options.rpm, '--rpm'),
          tokensPerMinute: options.tpm === undefined ? undefined : parsePositiveInteger(options.tpm, '--tpm'),
          expiresAt: options.expires === undefined ? undefined : parseIsoDate(options.expires, '--expires'),
          budget: budgetOption(options),
        }, CLI_ACTOR);
        return secretOutput(key, secret, `Created key ${key.id} for account ${key.accountId}.`);
      }),
    );

  keys
    .command('list')
    .description('list API keys (prefixes only, never secrets); deleted keys only with --status deleted')
    .option('--account <account>', 'only the keys of this account (id or name)')
    .option('--status <status>', `only keys that are ${KEY_STATUSES.join(', ')}`)
    .action(
      context.storeAction(async (store, command) => {
        const options = command.opts<{ account?: string; status?: string }>();
        const now = new Date();
        const list = await listKeys(store, { accountRef: options.account, ...(options.status === undefined ? {} : { status: parseKeyStatus(options.status) }) }, now);
        return {
          json: list.map((key) => keyView(key, now)),
          text: list.length === 0 ? 'No keys.' : keysTable(list, now),
        };
      }),
    );

  keys
    .command('get')
    .description("show a key, with what its budget has spent and has left in the current period")
    .argument('<key>', 'key id or prefix (sk-tg-…)')
    .action(
      context.storeAction(async (store, command) => {
        const [keyRef = ''] = command.args;
        const now = new Date();
        const details = await getKey(store, keyRef, now);
        return { json: keyDetailsView(details, now), text: describeKey(details, now) };
      }),
    );

  keys
    .command('update')
    .description("change a key's name, models, limits, expiry or budget")
    .argument('<key>', 'key id or prefix (sk-tg-…)')
    .option('--name <name>', 'a new label ("" for none)')
    .option('--models <ids>', 'comma-separated model ids the key may use, or "all"')
    .option('--rpm <count>', 'requests per rate-limit window, or "default"')
    .option('--tpm <count>', 'tokens per minute, or "default"')
    .option('--expires <iso>', 'expiry as an ISO 8601 date or date-time, or "never"')
    .option('--budget <usd>', 'spend limit in USD, or "none"')
    .option('--budget-period <period>', `${PERIOD_HELP} (default: the key's current one, else total)`)
    .action(
      context.storeAction(async (store, command) => {
        const [keyRef = ''] = command.args;
        const options = command.opts<SettingsOptions>();
        const input: KeyUpdateInput = {};
        if (options.name !== undefined) input.name = options.name;
        if (options.models !== undefined) input.models = options.models.trim() === 'all' ? null : options.models.split(',');
        if (options.rpm !== undefined) input.requestsPerWindow = options.rpm.trim() === 'default' ? null : parsePositiveInteger(options.rpm, '--rpm');
        if (options.tpm !== undefined) input.tokensPerMinute = options.tpm.trim() === 'default' ? null : parsePositiveInteger(options.tpm, '--tpm');
        if (options.expires !== undefined) input.expiresAt = options.expires.trim() === 'never' ? null : parseIsoDate(options.expires, '--expires');
        const budget = options.budget?.trim() === 'none' && options.budgetPeriod === undefined ? null : budgetOption(options);
        if (budget !== undefined) input.budget = budget;
        const key = await updateKey(store, keyRef, input, CLI_ACTOR);
        return { json: keyView(key), text: `Updated key ${key.id} (${key.prefix}…).`, keysChanged: true };
      }),
    );

  for (const [name, disabled] of [['disable', true], ['enable', false]] as const) {
    keys
      .command(name)
      .description(`${name} an API key`)
      .argument('<key>', 'key id or prefix (sk-tg-…)')
      .action(
        context.storeAction(async (store, command) => {
          const [keyRef = ''] = command.args;
          const key = await setKeyDisabled(store, keyRef, disabled, CLI_ACTOR);
          return { json: keyView(key), text: `Key ${key.id} (${key.prefix}…) is now ${disabled ? 'disabled' : 'enabled'}.`, keysChanged: true };
        }),
      );
  }

  keys
    .command('rotate')
    .description('give a key a new secret, shown once; the old one is refused from then on')
    .argument('<key>', 'key id or prefix (sk-tg-…)')
    .action(
      context.storeAction(async (store, command) => {
        const [keyRef = ''] = command.args;
        const { key, secret } = await rotateKey(store, keyRef, CLI_ACTOR);
        return { ...secretOutput(key, secret, `Rotated key ${key.id}; its old secret is refused from now on.`), keysChanged: true };
      }),
    );

  keys
    .command('delete')
    .description('delete a key: refused from then on; its ledger history stays')
    .argument('<key>', 'key id or prefix (sk-tg-…)')
    .action(
      context.storeAction(async (store, command) => {
        const [keyRef = ''] = command.args;
        const key = await deleteKey(store, keyRef, CLI_ACTOR);
        return { json: keyView(key), text: `Deleted key ${key.id} (${key.prefix}…).`, keysChanged: true };
      }),
    );
}

/** `--budget` and `--budget-period` as a budget input; undefined when neither is given. */
function budgetOption(options: SettingsOptions): KeyBudgetInput | undefined {
  if (options.budget === undefined) {
    if (options.budgetPeriod !== undefined) throw new AdminError('invalid_input', '--budget-period needs --budget');
    return undefined;
  }
  return { limitUsd: options.budget, ...(options.budgetPeriod === undefined ? {} : { period: options.budgetPeriod }) };
}

function secretOutput(key: ApiKeyRecord, secret: string, headline: string): { json: unknown; text: string } {
  const { id, ...view } = keyView(key);
  return {
    // The secret right after the id, where a reader of the JSON looks first.
    json: { id, key: secret, ...view },
    text: [headline, `API key: ${secret}`, 'Copy it now: it is not stored and will not be shown again.'].join('\n'),
  };
}

function describeBudget(key: ApiKeyRecord): string {
  if (key.budget === undefined) return '-';
  return `${formatUsd(key.budget.limitNanos)}/${key.budget.period}`;
}

function describeKey(details: KeyDetails, now: Date): string {
  const { key, budgetUsage } = details;
  const rows: Array<[string, string]> = [
    ['ID', key.id],
    ['PREFIX', key.prefix],
    ['ACCOUNT', key.accountId],
    ['NAME', key.name ?? '-'],
    ['STATUS', keyStatus(key, now)],
    ['MODELS', key.models?.join(',') ?? 'all'],
    ['RPM', key.requestsPerWindow?.toString() ?? 'default'],
    ['TPM', key.tokensPerMinute?.toString() ?? 'default'],
    ['EXPIRES', key.expiresAt === null ? 'never' : formatTimestamp(key.expiresAt)],
    ['CREATED', formatTimestamp(key.createdAt)],
  ];
  if (key.deletedAt !== undefined) rows.push(['DELETED', formatTimestamp(key.deletedAt)]);
  if (key.budget === undefined || budgetUsage === undefined) {
    rows.push(['BUDGET', 'none']);
  } else {
    const ends = budgetUsage.endsAt === null ? 'never resets' : `resets ${formatTimestamp(budgetUsage.endsAt)}`;
    rows.push(
      ['BUDGET USD', `${formatUsd(key.budget.limitNanos)} per ${key.budget.period} (${ends})`],
      ['SPENT USD', formatUsd(budgetUsage.spentNanos)],
      ['RESERVED USD', formatUsd(budgetUsage.reservedNanos)],
      ['REMAINING USD', formatUsd(budgetUsage.remainingNanos)],
    );
  }
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join('\n');
}

function keysTable(list: readonly ApiKeyRecord[], now: Date): string {
  return formatTable(
    [
      { header: 'ID' },
      { header: 'PREFIX' },
      { header: 'ACCOUNT' },
      { header: 'NAME' },
      { header: 'MODELS' },
      { header: 'RPM', align: 'right' },
      { header: 'TPM', align: 'right' },
      { header: 'BUDGET USD', align: 'right' },
      { header: 'EXPIRES' },
      { header: 'STATUS' },
    ],
    list.map((key) => [
      key.id,
      key.prefix,
      key.accountId,
      key.name ?? '-',
      key.models?.join(',') ?? 'all',
      key.requestsPerWindow?.toString() ?? 'default',
      key.tokensPerMinute?.toString() ?? 'default',
      describeBudget(key),
      key.expiresAt === null ? 'never' : formatTimestamp(key.expiresAt),
      keyStatus(key, now),
    ]),
  );
}
