/**
 * Errors that repeat what the client sent (an unknown parameter's name, a value outside an enum, a
 * client-chosen key or id) repeat at most 256 characters of it, then "…" (docs/contract.md, Where
 * the contract is silent): a 2 MB name must not come back as 4 MB of error. Short names keep
 * OpenAI's exact wording.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';

/** The bound and its mark (protocol/client-echo.ts), as the contract states them. */
const MAX_ECHO_LENGTH = 256;
const CLIPPED_MARK = '…';
const HUGE = 2 * 1024 * 1024;
/** A 2 MB name and what an error may show of it. */
const hugeName = 'k'.repeat(HUGE);
const clipped = `${'k'.repeat(MAX_ECHO_LENGTH)}${CLIPPED_MARK}`;
/** Generous room for an error's own words around one clipped echo. */
const MAX_ERROR_BYTES = 2_000;

const chat = { model: 'model-5.6', messages: [{ role: 'user', content: 'Hello' }] };
const responses = { model: 'model-5.6', input: 'Hello' };

interface ErrorBody {
  error: { message: string; type: string; param?: string; code: string };
}

describe('errors repeat a bounded part of what the client sent', () => {
  let harness: Harness;
  let secret: string;

  beforeAll(async () => {
    harness = await startHarness();
    ({ secret } = await harness.newAccount('5'));
  });
  afterAll(async () => harness?.close());

  async function refusal(path: string, body: string | object, headers: Record<string, string> = {}): Promise<{ text: string; parsed: ErrorBody }> {
    const response = await harness.post(path, body, secret, headers);
    expect(response.status).toBe(400);
    const text = await response.text();
    expect(Buffer.byteLength(text)).toBeLessThan(MAX_ERROR_BYTES);
    return { text, parsed: JSON.parse(text) as ErrorBody };
  }

  it("an unknown parameter's short name is echoed whole, in OpenAI's exact words", async () => {
    for (const [path, body] of [['/v1/chat/completions', chat], ['/v1/responses', responses]] as const) {
      const response = await harness.post(path, { ...body, surprise: true }, secret);
      expect(await response.text()).toBe(
        '{"error":{"message":"Unrecognized request argument supplied: surprise","type":"invalid_request_error","param":"surprise","code":"unknown_parameter"}}',
      );
    }
    // Exactly at the bound: still whole.
    const atBound = 'b'.repeat(MAX_ECHO_LENGTH);
    const { parsed } = await refusal('/v1/chat/completions', { ...chat, [atBound]: 1 });
    expect(parsed.error.param).toBe(atBound);
  });

  it("a 2 MB unknown parameter's name is cut to 256 characters and … in message and param, on both surfaces", async () => {
    for (const [path, body] of [['/v1/chat/completions', chat], ['/v1/responses', responses]] as const) {
      const { parsed } = await refusal(path, { ...body, [hugeName]: 1 });
      expect(parsed.error).toEqual({
        message: `Unrecognized request argument supplied: ${clipped}`,
        type: 'invalid_request_error',
        param: clipped,
        code: 'unknown_parameter',
      });
    }
  });

  it('long values and client-chosen keys are cut the same way wherever an error names them', async () => {
    const hugeValue = 'v'.repeat(HUGE);
    const role = await refusal('/v1/chat/completions', { ...chat, messages: [{ role: hugeValue, content: 'x' }] });
    expect(role.parsed.error.param).toBe('messages[0].role');
    expect(role.parsed.error.message).toContain(`Invalid value: '${'v'.repeat(MAX_ECHO_LENGTH)}${CLIPPED_MARK}'. Supported values are:`);

    const bias = await refusal('/v1/chat/completions', { ...chat, logit_bias: { [hugeName]: 500 } });
    expect(bias.parsed.error.param).toBe(`logit_bias.${clipped}`);

    const metadata = await refusal('/v1/responses', { ...responses, metadata: { [hugeName]: 'v' } });
    expect(metadata.parsed.error.param).toBe(`metadata.${clipped}`);
    expect(metadata.parsed.error.code).toBe('string_above_max_length');

    const clientMetadata = await refusal('/v1/responses', { ...responses, client_metadata: { [hugeName]: 1 } });
    expect(clientMetadata.parsed.error.param).toBe(`client_metadata.${clipped}`);

    const toolChoice = await refusal('/v1/responses', { ...responses, tool_choice: { type: 'function', name: hugeName } });
    expect(toolChoice.parsed.error.message).toBe(`Tool choice '${clipped}' not found in 'tools' parameter.`);

    const previous = await refusal('/v1/responses', { ...responses, previous_response_id: `resp_${hugeName}` });
    expect(previous.parsed.error.code).toBe('previous_response_not_found');
    expect(previous.parsed.error.message).toBe(`Previous response with id 'resp_${'k'.repeat(MAX_ECHO_LENGTH - 5)}${CLIPPED_MARK}' not found.`);
  });

  it("Anthropic's error shape, which puts the field before the message, is bounded too", async () => {
    const { parsed } = await refusal('/v1/chat/completions', { ...chat, [hugeName]: 1 }, { 'anthropic-version': '2023-06-01' });
    expect(parsed).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: `Unrecognized request argument supplied: ${clipped}` } });
  });

  it("the console's key-holder routes cut an unknown query parameter's name", async () => {
    const longName = 'q'.repeat(8_000);
    const response = await fetch(`${harness.baseUrl}/console/api/self/usage?${longName}=1`, { headers: { authorization: `Bearer ${secret}` } });
    expect(response.status).toBe(400);
    const text = await response.text();
    expect(Buffer.byteLength(text)).toBeLessThan(MAX_ERROR_BYTES);
    const shown = `${'q'.repeat(MAX_ECHO_LENGTH)}${CLIPPED_MARK}`;
    expect((JSON.parse(text) as ErrorBody).error).toMatchObject({ param: shown, code: 'unknown_parameter', message: `Invalid request: ${shown}: unrecognized field.` });
  });
});
