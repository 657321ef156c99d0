import { describe, expect, it } from 'vitest';
import type { InputItem } from '../canonical.js';
import { decodeInput } from './decode-input.js';
import { encodeInputItems, outputItemsAsInputItems } from './input-items.js';

function counterIds(): (prefix: string) => string {
  let next = 0;
  return (prefix) => `${prefix}_${(next += 1)}`;
}

const conversation: InputItem[] = [
  { type: 'message', role: 'developer', content: [{ type: 'text', text: 'Be terse.' }] },
  {
    type: 'message',
    role: 'user',
    content: [
      { type: 'text', text: 'What is here?' },
      { type: 'image', url: 'https://img.example/a.png', detail: 'low' },
    ],
  },
  { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'A harbour.' }, { type: 'refusal', refusal: 'No more.' }] },
  { type: 'function_call', callId: 'call_7', name: 'weather', arguments: '{"city":"Bergen"}' },
  { type: 'function_call_output', callId: 'call_7', output: '{"temp_c":6}' },
];

describe('encodeInputItems', () => {
  it('gives every item an id and the Responses input shape', () => {
    expect(encodeInputItems(conversation, counterIds())).toEqual([
      { id: 'msg_1', type: 'message', role: 'developer', status: 'completed', content: [{ type: 'input_text', text: 'Be terse.' }] },
      {
        id: 'msg_2',
        type: 'message',
        role: 'user',
        status: 'completed',
        content: [
          { type: 'input_text', text: 'What is here?' },
          { type: 'input_image', image_url: 'https://img.example/a.png', detail: 'low' },
        ],
      },
      {
        id: 'msg_3',
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [
          { type: 'output_text', text: 'A harbour.', annotations: [] },
          { type: 'refusal', refusal: 'No more.' },
        ],
      },
      { id: 'fc_4', type: 'function_call', status: 'completed', arguments: '{"city":"Bergen"}', call_id: 'call_7', name: 'weather' },
      { id: 'fco_5', type: 'function_call_output', status: 'completed', call_id: 'call_7', output: '{"temp_c":6}' },
    ]);
  });

  it('decodes back into the same canonical input', () => {
    expect(decodeInput(encodeInputItems(conversation))).toEqual(conversation);
  });

  it('draws random ids by default, and defaults an image detail to auto', () => {
    const [first, second] = encodeInputItems([
      { type: 'message', role: 'user', content: [{ type: 'image', url: 'data:image/png;base64,AA' }] },
      { type: 'message', role: 'user', content: [{ type: 'text', text: 'x' }] },
    ]);
    expect(first?.id).toMatch(/^msg_[0-9a-f]{48}$/);
    expect(first?.id).not.toBe(second?.id);
    expect(first?.content).toEqual([{ type: 'input_image', image_url: 'data:image/png;base64,AA', detail: 'auto' }]);
  });

  it('carries a refusal outside an assistant message as text, and leaves an assistant image out', () => {
    const items = encodeInputItems(
      [
        { type: 'message', role: 'user', content: [{ type: 'refusal', refusal: 'nope' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'image', url: 'https://img.example/b.png' }, { type: 'text', text: 'ok' }] },
      ],
      counterIds(),
    );
    expect(items[0]?.content).toEqual([{ type: 'input_text', text: 'nope' }]);
    expect(items[1]?.content).toEqual([{ type: 'output_text', text: 'ok', annotations: [] }]);
  });
});

describe('outputItemsAsInputItems', () => {
  const output = [
    { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'thinking' }, { type: 'bogus' }], encrypted_content: 'gAAA' },
    {
      id: 'msg_2',
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [
        { type: 'output_text', text: 'Checking.', annotations: [{ type: 'url_citation', url: 'https://x.example' }], logprobs: [] },
        { type: 'refusal', refusal: 'Partly not.' },
        { type: 'mystery' },
      ],
    },
    { id: 'fc_3', type: 'function_call', status: 'completed', arguments: '{"city":"Oslo"}', call_id: 'call_9', name: 'weather' },
    { id: 'fc_4', type: 'function_call', status: 'incomplete', arguments: '{"ci', call_id: 'call_10', name: 'weather' },
  ];

  it('keeps message and call ids, call ids and statuses; drops logprobs and unknown parts', () => {
    expect(outputItemsAsInputItems(output)).toEqual([
      { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'thinking' }], encrypted_content: 'gAAA' },
      {
        id: 'msg_2',
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [
          { type: 'output_text', text: 'Checking.', annotations: [{ type: 'url_citation', url: 'https://x.example' }] },
          { type: 'refusal', refusal: 'Partly not.' },
        ],
      },
      { id: 'fc_3', type: 'function_call', status: 'completed', arguments: '{"city":"Oslo"}', call_id: 'call_9', name: 'weather' },
      { id: 'fc_4', type: 'function_call', status: 'incomplete', arguments: '{"ci', call_id: 'call_10', name: 'weather' },
    ]);
  });

  it('replays as canonical assistant text and calls (reasoning has no canonical slot)', () => {
    expect(decodeInput(outputItemsAsInputItems(output))).toEqual([
      { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Checking.' }, { type: 'refusal', refusal: 'Partly not.' }] },
      { type: 'function_call', callId: 'call_9', name: 'weather', arguments: '{"city":"Oslo"}' },
      { type: 'function_call', callId: 'call_10', name: 'weather', arguments: '{"ci' },
    ]);
  });

  it('leaves out what cannot be replayed instead of failing', () => {
    expect(outputItemsAsInputItems(undefined)).toEqual([]);
    expect(outputItemsAsInputItems({ not: 'a list' })).toEqual([]);
    expect(
      outputItemsAsInputItems([
        null,
        'text',
        { type: 'message', role: 'assistant', content: [] },
        { id: '', type: 'message', role: 'assistant', content: [] },
        { id: 'msg_u', type: 'message', role: 'user', content: [] },
        { id: 'msg_c', type: 'message', role: 'assistant', content: 'flat' },
        { id: 'ws_1', type: 'web_search_call', status: 'completed' },
        { id: 'fc_x', type: 'function_call', call_id: '', name: 'f', arguments: '{}' },
        { id: 'fc_y', type: 'function_call', call_id: 'c', name: 'f' },
      ]),
    ).toEqual([]);
  });

  it('reads an unknown item status as completed', () => {
    const [item] = outputItemsAsInputItems([{ id: 'msg_1', type: 'message', role: 'assistant', status: 'in_progress', content: [] }]);
    expect(item?.status).toBe('completed');
  });
});
