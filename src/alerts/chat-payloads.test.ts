/**
 * The chat messages of every event type in every format, as snapshots (reviewed by eye: each says
 * what happened, to what, and when, in plain text), plus the limits and escapes each service needs.
 */
import { describe, expect, it } from 'vitest';
import { ALERT_EVENT_TYPES, WEBHOOK_FORMATS, type AlertEventType } from '../config/schema.js';
import type { AlertEnvelope } from './alert-events.js';
import { alertMessage, renderAlertBody } from './chat-payloads.js';

const CREATED_AT = '2026-11-28T21:39:05.123Z';

const DATA: Record<AlertEventType, Record<string, unknown>> = {
  'balance.low': { account_id: 'acct_1', account_name: 'northwind', balance_usd: '4.5', reserved_usd: '0.5', available_usd: '4', threshold_usd: '5' },
  'key_budget.80': { key_id: 'key_1', key_name: 'ci', key_prefix: 'sk-tg-abcd', account_id: 'acct_1', period: 'daily', period_start: '2026-11-28T00:00:00.000Z', resets_at: '2026-11-29T00:00:00.000Z', limit_usd: '10', spent_usd: '8.2' },
  'key_budget.100': { key_id: 'key_1', key_name: 'ci', key_prefix: 'sk-tg-abcd', account_id: 'acct_1', period: 'total', period_start: '2026-01-01T00:00:00.000Z', resets_at: null, limit_usd: '10', spent_usd: '10.01' },
  'target.down': { scope: 'target', target: 'upstream/upstream-model', provider: 'upstream', model: 'upstream-model', cooling_until: '2026-11-28T21:39:35.000Z', failure: { kind: 'status', status: 500 }, instance: 'gw-1:4242' },
  'target.up': { scope: 'target', target: 'upstream/upstream-model', provider: 'upstream', model: 'upstream-model', instance: 'gw-1:4242' },
  'upstream_key.refused': { provider: 'openai', key: 'primary', status: 401, instance: 'gw-1:4242' },
  'spend.report': {
    period: 'day',
    from: '2026-11-27T00:00:00.000Z',
    to: '2026-11-28T00:00:00.000Z',
    total_usd: '12.5',
    requests: 340,
    accounts: 3,
    top: [
      { account_id: 'acct_1', account_name: 'northwind', spent_usd: '10', requests: 300 },
      { account_id: 'acct_2', account_name: 'contoso', spent_usd: '2.000000001', requests: 30 },
    ],
  },
  slow_answer: { model: 'model-5.6', target: 'sim/model-5.6', request_id: 'req_1', first_byte_ms: 4200, duration_ms: 9000, first_token_threshold_ms: 2000, duration_threshold_ms: null, instance: 'gw-1:4242' },
};

const envelopeOf = (type: AlertEventType, data = DATA[type]): AlertEnvelope => ({ id: 'evt_0123456789abcdef', type, created_at: CREATED_AT, data });

describe('chat payloads', () => {
  for (const format of WEBHOOK_FORMATS.filter((each) => each !== 'generic')) {
    for (const type of ALERT_EVENT_TYPES) {
      it(`renders ${type} for ${format}`, () => {
        const envelope = envelopeOf(type);
        const body = renderAlertBody(format, envelope, JSON.stringify(envelope));
        expect(JSON.parse(body)).toMatchSnapshot();
      });
    }
  }

  it('sends the generic envelope byte for byte', () => {
    const raw = JSON.stringify(envelopeOf('target.down'));
    expect(renderAlertBody('generic', envelopeOf('target.down'), raw)).toBe(raw);
  });

  it('names the subject, the failure and the time in every message', () => {
    const down = alertMessage(envelopeOf('target.down'));
    expect(down.title).toBe('Tollgate: target upstream/upstream-model is out of rotation');
    expect(down.lines).toContain('Failure: status (HTTP 500)');
    expect(down.lines).toContain('When: 2026-11-28 21:39:05 UTC');
    expect(alertMessage(envelopeOf('target.down', { ...DATA['target.down'], scope: 'provider' })).title).toBe('Tollgate: provider upstream is out of rotation');
    for (const type of ALERT_EVENT_TYPES) {
      const message = alertMessage(envelopeOf(type));
      expect(message.lines.join('\n')).not.toMatch(/https?:|undefined|\[object/);
    }
  });

  it('escapes Slack markup, parses no Discord mentions, and keeps within each service limit', () => {
    const name = `<!channel> & ${'x'.repeat(5_000)}`;
    const envelope = envelopeOf('balance.low', { ...DATA['balance.low'], account_name: name });
    const slack = JSON.parse(renderAlertBody('slack', envelope, '')) as { text: string; blocks: Array<{ text: { text: string } }> };
    expect(slack.text.startsWith('Tollgate: account &lt;!channel&gt; &amp; x')).toBe(true);
    expect(slack.text.length).toBeLessThanOrEqual(3_000);
    expect([...slack.blocks[0]!.text.text].length).toBe(150);
    expect(slack.blocks[0]!.text.text.endsWith('…')).toBe(true);
    const discord = JSON.parse(renderAlertBody('discord', envelope, '')) as { content: string; embeds: Array<{ title: string; description: string }>; allowed_mentions: { parse: unknown[] } };
    expect([...discord.content].length).toBe(2_000);
    expect([...discord.embeds[0]!.title].length).toBe(256);
    expect([...discord.embeds[0]!.description].length).toBeLessThanOrEqual(4_096);
    expect(discord.allowed_mentions).toEqual({ parse: [] });
  });

  it('lists the fields of an event type it does not know', () => {
    const message = alertMessage({ id: 'evt_x', type: 'future.event' as AlertEventType, created_at: CREATED_AT, data: { answer: 42, name: 'n' } });
    expect(message).toEqual({ title: 'Tollgate: future.event', lines: ['answer: 42', 'name: n', 'When: 2026-11-28 21:39:05 UTC'] });
  });
});
