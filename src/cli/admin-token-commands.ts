/** `tollgate admin-tokens create | list | disable | enable`. Secrets are printed once, at creation. */
import type { Command } from 'commander';
import { ADMIN_ROLES, createAdminToken, listAdminTokens, setAdminTokenDisabled } from '../admin/admin-tokens.js';
import { CLI_ACTOR } from '../admin/audit.js';
import { adminTokenView } from '../admin/views.js';
import type { AdminTokenRecord } from '../store/store.js';
import type { CommandContext } from './command-context.js';
import { formatTable, formatTimestamp } from './table.js';

export function registerAdminTokenCommands(program: Command, context: CommandContext): void {
  const tokens = program.command('admin-tokens').description('create, list, disable and enable tokens of the admin API');

  tokens
    .command('create')
    .description('create an admin token; its secret is shown once')
    .requiredOption('--role <role>', `${ADMIN_ROLES.join(' | ')}: viewer reads, operator manages accounts and credit, owner also admin tokens`)
    .option('--name <name>', 'a label for the token')
    .action(
      context.storeAction(async (store, command) => {
        const options = command.opts<{ role: string; name?: string }>();
        const { token, secret } = await createAdminToken(store, { role: options.role, name: options.name }, CLI_ACTOR);
        const { id, ...view } = adminTokenView(token);
        return {
          json: { id, token: secret, ...view },
          text: [
            `Created ${token.role} admin token ${token.id}.`,
            `Admin token: ${secret}`,
            'Copy it now: it is not stored and will not be shown again.',
          ].join('\n'),
        };
      }),
    );

  tokens
    .command('list')
    .description('list admin tokens (prefixes only, never secrets)')
    .action(
      context.storeAction(async (store) => {
        const list = await listAdminTokens(store);
        return { json: list.map(adminTokenView), text: list.length === 0 ? 'No admin tokens.' : tokensTable(list) };
      }),
    );

  for (const [name, disabled] of [['disable', true], ['enable', false]] as const) {
    tokens
      .command(name)
      .description(`${name} an admin token`)
      .argument('<token>', 'token id or prefix (tg-admin-…)')
      .action(
        context.storeAction(async (store, command) => {
          const [reference = ''] = command.args;
          const token = await setAdminTokenDisabled(store, reference, disabled, CLI_ACTOR);
          return { json: adminTokenView(token), text: `Admin token ${token.id} (${token.prefix}…) is now ${disabled ? 'disabled' : 'enabled'}.` };
        }),
      );
  }
}

function tokensTable(list: readonly AdminTokenRecord[]): string {
  return formatTable(
    [{ header: 'ID' }, { header: 'PREFIX' }, { header: 'ROLE' }, { header: 'NAME' }, { header: 'STATUS' }, { header: 'CREATED' }],
    list.map((token) => [token.id, token.prefix, token.role, token.name ?? '-', token.disabled ? 'disabled' : 'active', formatTimestamp(token.createdAt)]),
  );
}
