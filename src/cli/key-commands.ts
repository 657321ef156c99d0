/** `tollgate keys create | list | disable | enable`. Secrets are printed once, at creation. */
import type { Command } from 'commander';
import { parseIsoDate, parsePositiveInteger } from '../admin/input.js';
import { createKey, keyStatus, listKeys, setKeyDisabled } from '../admin/keys.js';
import { keyView } from '../admin/views.js';
import type { ApiKeyRecord } from '../store/store.js';
import type { CommandContext } from './program.js';
import { formatTable, formatTimestamp } from './table.js';

interface CreateOptions {
  account: string;
  name?: string;
  models?: string;
  rpm?: string;
  tpm?: string;
  expires?: string;
}

export function registerKeyCommands(program: Command, context: CommandContext): void {
  const keys = program.command('keys').description('create, list, disable and enable API keys');

  keys
    .command('create')
    .description('create an API key; its secret is shown once')
    .requiredOption('--account <account>', 'account id or name')
    .option('--name <name>', 'a label for the key')
    .option('--models <ids>', 'comma-separated model ids the key may use (default: all)')
    .option('--rpm <count>', 'requests per rate-limit window (default: the configured limit)')
    .option('--tpm <count>', 'tokens per minute (default: the configured limit)')
    .option('--expires <iso>', 'expiry as an ISO 8601 date or date-time (default: never)')
    .action(
      context.storeAction(async (store, command) => {
        const options = command.opts<CreateOptions>();
        const { key, secret } = await createKey(store, {
          accountRef: options.account,
          name: options.name,
          models: options.models?.split(','),
          requestsPerWindow: options.rpm === undefined ? undefined : parsePositiveInteger(options.rpm, '--rpm'),
          tokensPerMinute: options.tpm === undefined ? undefined : parsePositiveInteger(options.tpm, '--tpm'),
          expiresAt: options.expires === undefined ? undefined : parseIsoDate(options.expires, '--expires'),
        });
        const { id, ...view } = keyView(key);
        return {
          // The secret right after the id, where a reader of the JSON looks first.
          json: { id, key: secret, ...view },
          text: [
            `Created key ${key.id} for account ${key.accountId}.`,
            `API key: ${secret}`,
            'Copy it now: it is not stored and will not be shown again.',
          ].join('\n'),
        };
      }),
    );

  keys
    .command('list')
    .description('list API keys (prefixes only, never secrets)')
    .option('--account <account>', 'only the keys of this account (id or name)')
    .action(
      context.storeAction(async (store, command) => {
        const list = await listKeys(store, command.opts<{ account?: string }>().account);
        const now = new Date();
        return {
          json: list.map((key) => keyView(key, now)),
          text: list.length === 0 ? 'No keys.' : keysTable(list, now),
        };
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
          const key = await setKeyDisabled(store, keyRef, disabled);
          return { json: keyView(key), text: `Key ${key.id} (${key.prefix}…) is now ${disabled ? 'disabled' : 'enabled'}.`, keysChanged: true };
        }),
      );
  }
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
      key.expiresAt === null ? 'never' : formatTimestamp(key.expiresAt),
      keyStatus(key, now),
    ]),
  );
}
