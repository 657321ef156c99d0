/**
 * Alert events as chat messages (README, "Alerts"): the body a Slack, Discord or Microsoft Teams
 * incoming webhook accepts, rendered from the event's envelope at each attempt (the outbox keeps
 * the envelope). Each message says in plain text, with no links, what happened, to which model,
 * target, provider, account or key, and when (UTC); the chat services render it as they like.
 *
 * Shapes, kept to the fields each service documents for incoming webhooks:
 * - Slack: `{text, blocks}` — `text` is the notification's fallback; a `header` block (plain text,
 *   at most 150 characters) and a `section` block (plain text, at most 3,000).
 * - Discord: `{content, embeds, allowed_mentions}` — `content` at most 2,000 characters, one embed
 *   (title at most 256, description at most 4,096), and no mentions parsed, so an account named
 *   `@everyone` pings nobody.
 * - Teams: a `message` with one Adaptive Card attachment (version 1.2: a bold TextBlock and one per
 *   line), the shape both Teams' Workflows webhooks and its incoming webhooks take.
 */
import type { WebhookFormat } from '../config/schema.js';
import type { AlertEnvelope } from './alert-events.js';

/** The human message of an event: a one-line title and its detail lines. */
export interface AlertMessage {
  title: string;
  lines: string[];
}

/** The body to POST to a webhook of `format` (the envelope itself for `generic`). */
export function renderAlertBody(format: WebhookFormat, envelope: AlertEnvelope, rawEnvelope: string): string {
  if (format === 'generic') return rawEnvelope;
  const message = alertMessage(envelope);
  if (format === 'slack') return JSON.stringify(slackPayload(message));
  if (format === 'discord') return JSON.stringify(discordPayload(message, envelope));
  return JSON.stringify(teamsPayload(message));
}

export function slackPayload(message: AlertMessage) {
  const text = `${message.title}\n${message.lines.join('\n')}`;
  return {
    text: cut(escapeSlack(text), 3_000),
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: cut(message.title, 150) } },
      { type: 'section', text: { type: 'plain_text', text: cut(message.lines.join('\n'), 3_000) } },
    ],
  };
}

export function discordPayload(message: AlertMessage, envelope: AlertEnvelope) {
  return {
    content: cut(message.title, 2_000),
    embeds: [{ title: cut(message.title, 256), description: cut(message.lines.join('\n'), 4_096), timestamp: envelope.created_at, color: colourOf(envelope.type) }],
    allowed_mentions: { parse: [] as string[] },
  };
}

export function teamsPayload(message: AlertMessage) {
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.2',
          body: [
            { type: 'TextBlock', text: message.title, weight: 'Bolder', size: 'Medium', wrap: true },
            ...message.lines.map((line) => ({ type: 'TextBlock', text: line, wrap: true, spacing: 'Small' })),
          ],
        },
      },
    ],
  };
}

/** What the event says, in words; unknown fields are left out, an unknown type listed field by field. */
export function alertMessage(envelope: AlertEnvelope): AlertMessage {
  const data = envelope.data;
  const text = (key: string): string => {
    const value = data[key];
    return value === undefined || value === null ? '—' : typeof value === 'string' ? value : JSON.stringify(value);
  };
  const when = `When: ${utc(envelope.created_at)}`;
  const instance = data.instance === undefined ? [] : [`Seen by: ${text('instance')}`];
  switch (envelope.type) {
    case 'balance.low':
      return {
        title: `Tollgate: account ${text('account_name')} is low on balance`,
        lines: [`Account: ${text('account_name')} (${text('account_id')})`, `Available: $${text('available_usd')} (balance $${text('balance_usd')}, held $${text('reserved_usd')})`, `Threshold: $${text('threshold_usd')}`, when],
      };
    case 'key_budget.80':
    case 'key_budget.100':
      return {
        title: `Tollgate: key ${text('key_name')} has spent ${envelope.type === 'key_budget.80' ? '80%' : 'all'} of its ${text('period')} budget`,
        lines: [
          `Key: ${text('key_name')} (${text('key_prefix')}…, ${text('key_id')})`,
          `Account: ${text('account_id')}`,
          `Spent: $${text('spent_usd')} of $${text('limit_usd')}`,
          data.resets_at === null || data.resets_at === undefined ? 'Resets: never (a total budget)' : `Resets: ${utc(text('resets_at'))}`,
          when,
        ],
      };
    case 'target.down': {
      const failure = data.failure as { kind?: unknown; status?: unknown } | undefined;
      const cause = failure === undefined ? [] : [`Failure: ${String(failure.kind)}${failure.status === undefined ? '' : ` (HTTP ${String(failure.status)})`}`];
      const subject = data.scope === 'provider' ? `provider ${text('provider')}` : `target ${text('target')}`;
      return {
        title: `Tollgate: ${subject} is out of rotation`,
        lines: [
          `Target: ${text('target')}`,
          `Provider: ${text('provider')}`,
          ...(data.model === undefined ? [] : [`Upstream model: ${text('model')}`]),
          ...cause,
          ...(data.cooling_until === undefined ? [] : [`Retried after: ${utc(text('cooling_until'))}`]),
          when,
          ...instance,
        ],
      };
    }
    case 'target.up': {
      const subject = data.scope === 'provider' ? `provider ${text('provider')}` : `target ${text('target')}`;
      return {
        title: `Tollgate: ${subject} is back in rotation`,
        lines: [`Target: ${text('target')}`, `Provider: ${text('provider')}`, ...(data.model === undefined ? [] : [`Upstream model: ${text('model')}`]), when, ...instance],
      };
    }
    case 'upstream_key.refused':
      return {
        title: `Tollgate: provider ${text('provider')} refused its key ${text('key')}`,
        lines: [`Provider: ${text('provider')}`, `Key: ${text('key')} (left the pool until restart)`, `Upstream status: HTTP ${text('status')}`, when, ...instance],
      };
    case 'slow_answer':
      return {
        title: `Tollgate: model ${text('model')} answers slowly`,
        lines: [
          `Model: ${text('model')}`,
          `Target: ${text('target')}`,
          `First byte: ${ms(data.first_byte_ms)} (threshold ${ms(data.first_token_threshold_ms)})`,
          `Duration: ${ms(data.duration_ms)} (threshold ${ms(data.duration_threshold_ms)})`,
          `Request: ${text('request_id')}`,
          when,
          ...instance,
        ],
      };
    case 'spend.report': {
      const top = Array.isArray(data.top) ? (data.top as Array<Record<string, unknown>>) : [];
      const accounts = typeof data.accounts === 'number' ? data.accounts : 0;
      return {
        title: `Tollgate: spend for the ${data.period === 'week' ? 'week' : 'day'} from ${utc(text('from')).slice(0, 10)}: $${text('total_usd')}`,
        lines: [
          `Period: ${utc(text('from'))} to ${utc(text('to'))}`,
          `Total: $${text('total_usd')} over ${text('requests')} requests by ${accounts} ${accounts === 1 ? 'account' : 'accounts'}`,
          ...top.map((row, index) => `${index + 1}. ${String(row.account_name)} (${String(row.account_id)}): $${String(row.spent_usd)}, ${String(row.requests)} requests`),
          ...(accounts > top.length ? [`…and ${accounts - top.length} more`] : []),
          when,
        ],
      };
    }
    default:
      return { title: `Tollgate: ${String(envelope.type)}`, lines: [...Object.keys(data).map((key) => `${key}: ${text(key)}`), when] };
  }
}

function ms(value: unknown): string {
  return typeof value === 'number' ? `${value} ms` : 'none';
}

/** `2026-11-28 21:39:05 UTC`: unambiguous in any channel's time zone. */
function utc(iso: string): string {
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? iso : `${at.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** Slack reads `&`, `<` and `>` as markup (`<!channel>` pings everyone) even in a plain message. */
function escapeSlack(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

function cut(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

/** Red for trouble, green for a recovery, amber for the rest (Discord's colour is an RGB integer). */
function colourOf(type: string): number {
  if (type === 'target.up') return 0x2e7d32;
  if (type === 'target.down' || type === 'upstream_key.refused' || type === 'key_budget.100') return 0xc62828;
  return 0xf9a825;
}
