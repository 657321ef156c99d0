import { describe, expect, it } from 'vitest';
import type { CanonicalRequest } from '../canonical.js';
import { ResponsesEncoder } from './encoder.js';

const request: CanonicalRequest = { model: 'm', input: [], tools: [], toolChoice: 'auto', stream: true };
const usage = { inputTokens: 5, cachedInputTokens: 0, outputTokens: 3, reasoningTokens: 0 };

function encoder(stream: boolean): ResponsesEncoder {
  let next = 0;
  return new ResponsesEncoder({ responseId: 'resp_1', createdAt: 1, model: 'm', request: { ...request, stream }, stream, idGenerator: (prefix) => `${prefix}_${next++}`, now: () => 2 });
}

describe('a web search the upstream ran, on the Responses surface', () => {
  it('is a completed web_search_call item between the text before and after it, never a function call', () => {
    const whole = encoder(false);
    for (const event of [
      { type: 'text-delta', delta: 'Searching. ' },
      { type: 'web-search', query: 'oslo weather' },
      { type: 'text-delta', delta: 'Snow.' },
      { type: 'finish', reason: 'stop' },
    ] as const)
      whole.push(event);
    whole.finish(usage);
    const output = whole.response().output as Array<Record<string, unknown>>;
    expect(output.map((item) => item.type)).toEqual(['message', 'web_search_call', 'message']);
    expect(output[1]).toEqual({ id: 'ws_1', type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'oslo weather' } });
    expect(whole.response().status).toBe('completed');
  });

  it("streams OpenAI's events for it, in order, with counted sequence numbers", () => {
    const streaming = encoder(true);
    const frames = [...streaming.start(), ...streaming.push({ type: 'web-search', query: 'q' }), ...streaming.push({ type: 'text-delta', delta: 'A' }), ...streaming.finish(usage)];
    const events = frames.map((frame) => JSON.parse(frame.split('\n').find((line) => line.startsWith('data: '))!.slice(6)) as Record<string, unknown>);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_event, index) => index));
    const types = events.map((event) => event.type);
    expect(types.slice(2, 7)).toEqual([
      'response.output_item.added',
      'response.web_search_call.in_progress',
      'response.web_search_call.searching',
      'response.web_search_call.completed',
      'response.output_item.done',
    ]);
    expect(events[2]).toMatchObject({ output_index: 0, item: { type: 'web_search_call', status: 'in_progress', action: { type: 'search', query: 'q' } } });
    expect(events[3]).toEqual({ type: 'response.web_search_call.in_progress', sequence_number: 3, item_id: 'ws_0', output_index: 0 });
    expect(events[6]).toMatchObject({ item: { id: 'ws_0', status: 'completed' } });
    // The text after it is the next item.
    expect(events[7]).toMatchObject({ type: 'response.output_item.added', output_index: 1, item: { type: 'message' } });
  });
});
