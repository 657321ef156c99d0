/** `tollgate accounts create | list | credit`. */
import type { Command } from 'commander';
import { createAccount, creditAccount, listAccounts } from '../admin/accounts.js';
import { accountView } from '../admin/views.js';
import { formatUsd } from '../billing/money.js';
import type { AccountRecord } from '../store/store.js';
import type { CommandContext } from './program.js';
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
        const account = await createAccount(store, { name: options.name, balanceUsd: options.balance });
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
    .action(
      context.storeAction(async (store, command) => {
        const [accountRef = ''] = command.args;
        const account = await creditAccount(store, accountRef, command.opts<{ amount: string }>().amount);
        return {
          json: accountView(account),
          text: `Credited account ${describe(account)}; the balance is now ${formatUsd(account.balanceNanos)} USD.`,
        };
      }),
    );
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
