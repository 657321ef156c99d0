/** `tollgate accounts create | list | credit | debit | rename | low-balance | disable | enable`. */
import type { Command } from 'commander';
import { AdminError } from '../admin/admin-error.js';
import { createAccount, creditAccount, debitAccount, listAccounts, renameAccount, setAccountDisabled, setLowBalanceThreshold } from '../admin/accounts.js';
import { CLI_ACTOR } from '../admin/audit.js';
import { accountView } from '../admin/views.js';
import { formatUsd } from '../billing/money.js';
import type { AccountRecord } from '../store/store.js';
import type { CommandContext } from './command-context.js';
import { formatTable, formatTimestamp } from './table.js';

export function registerAccountCommands(program: Command, context: CommandContext): void {
  const accounts = program.command('accounts').description('create, list and credit accounts');

  accounts
    .command('create')
    .description('create an account')
    .requiredOption('--name <name>', 'account name, unique')
    .option('--balance <usd>', 'opening balance in USD', '0')
    .action(
      context.storeAction(async (store, command) => {
        const options = command.opts<{ name: string; balance: string }>();
        const account = await createAccount(store, { name: options.name, balanceUsd: options.balance }, CLI_ACTOR);
        return {
          json: accountView(account),
          text: `Created account ${describe(account)} with a balance of ${formatUsd(account.balanceNanos)} USD.`,
        };
      }),
    );

  accounts
    .command('list')
    .description('list accounts with their balances')
    .action(
      context.storeAction(async (store) => {
        const list = await listAccounts(store);
        return { json: list.map(accountView), text: list.length === 0 ? 'No accounts.' : accountsTable(list) };
      }),
    );

  accounts
    .command('credit')
    .description('add money to an account')
    .argument('<account>', 'account id or name')
    .requiredOption('--amount <usd>', 'amount in USD, greater than zero')
    .option('--reason <text>', 'why, kept on the ledger entry and in the audit log')
    .action(
      context.storeAction(async (store, command) => {
        const [accountRef = ''] = command.args;
        const options = command.opts<{ amount: string; reason?: string }>();
        const account = await creditAccount(store, accountRef, options.amount, options.reason ?? null, CLI_ACTOR);
        return {
          json: accountView(account),
          text: `Credited account ${describe(account)}; the balance is now ${formatUsd(account.balanceNanos)} USD.`,
        };
      }),
    );

  accounts
    .command('debit')
    .description('take money off an account (never below zero)')
    .argument('<account>', 'account id or name')
    .requiredOption('--amount <usd>', 'amount in USD, greater than zero')
    .requiredOption('--reason <text>', 'why, kept on the ledger entry and in the audit log')
    .action(
      context.storeAction(async (store, command) => {
        const [accountRef = ''] = command.args;
        const options = command.opts<{ amount: string; reason: string }>();
        const account = await debitAccount(store, accountRef, options.amount, options.reason, CLI_ACTOR);
        return {
          json: accountView(account),
          text: `Debited account ${describe(account)}; the balance is now ${formatUsd(account.balanceNanos)} USD.`,
        };
      }),
    );

  accounts
    .command('rename')
    .description('rename an account')
    .argument('<account>', 'account id or name')
    .requiredOption('--name <name>', 'the new name, unique')
    .action(
      context.storeAction(async (store, command) => {
        const [accountRef = ''] = command.args;
        const account = await renameAccount(store, accountRef, command.opts<{ name: string }>().name, CLI_ACTOR);
        return { json: accountView(account), text: `Renamed account ${account.id} to ${JSON.stringify(account.name)}.` };
      }),
    );

  accounts
    .command('low-balance')
    .description('alert (webhook balance.low) when the balance less open holds drops below an amount')
    .argument('<account>', 'account id or name')
    .option('--below <usd>', 'the threshold in USD, greater than zero')
    .option('--off', 'remove the threshold: no more balance.low alerts for this account')
    .action(
      context.storeAction(async (store, command) => {
        const [accountRef = ''] = command.args;
        const options = command.opts<{ below?: string; off?: boolean }>();
        if ((options.below === undefined) === (options.off !== true)) throw new AdminError('invalid_input', 'give either --below <usd> or --off');
        const account = await setLowBalanceThreshold(store, accountRef, options.below ?? null, CLI_ACTOR);
        const threshold = account.lowBalanceThresholdNanos;
        return {
          json: accountView(account),
          text:
            threshold === null
              ? `Account ${describe(account)} has no low-balance alert.`
              : `Account ${describe(account)} raises balance.low when its balance less open holds drops below ${formatUsd(threshold)} USD.`,
        };
      }),
    );

  for (const [name, disabled] of [['disable', true], ['enable', false]] as const) {
    accounts
      .command(name)
      .description(disabled ? "disable an account: its keys are refused within a second everywhere" : 'enable an account')
      .argument('<account>', 'account id or name')
      .action(
        context.storeAction(async (store, command) => {
          const [accountRef = ''] = command.args;
          const account = await setAccountDisabled(store, accountRef, disabled, CLI_ACTOR);
          return { json: accountView(account), text: `Account ${describe(account)} is now ${disabled ? 'disabled' : 'enabled'}.`, keysChanged: true };
        }),
      );
  }
}

function accountsTable(list: readonly AccountRecord[]): string {
  return formatTable(
    [
      { header: 'ID' },
      { header: 'NAME' },
      { header: 'BALANCE USD', align: 'right' },
      { header: 'RESERVED USD', align: 'right' },
      { header: 'STATUS' },
      { header: 'CREATED' },
    ],
    list.map((account) => [
      account.id,
      account.name,
      formatUsd(account.balanceNanos),
      formatUsd(account.reservedNanos),
      account.disabled ? 'disabled' : 'active',
      formatTimestamp(account.createdAt),
    ]),
  );
}

function describe(account: AccountRecord): string {
  return `${JSON.stringify(account.name)} (${account.id})`;
}
