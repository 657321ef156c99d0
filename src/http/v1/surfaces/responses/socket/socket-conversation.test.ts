import { describe, expect, it } from 'vitest';
import { SocketConversation } from './socket-conversation.js';

const completed = (id: string, output: unknown[]) => ({ id, object: 'response', status: 'completed', output });
const message = (text: string) => ({ id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] });

describe('SocketConversation', () => {
  it('runs a first turn as sent, a string input read as one user message', () => {
    const conversation = new SocketConversation();
    const body = { model: 'm', input: 'hello' };
    expect(conversation.splice(body)).toEqual({ body, input: [{ type: 'message', role: 'user', content: 'hello' }] });
  });

  it('splices the last response (its input, its output as input items, then the new items) and drops the id', () => {
    const conversation = new SocketConversation();
    const first = conversation.splice({ model: 'm', input: [{ type: 'message', role: 'developer', content: 'be brief' }] });
    conversation.remember(first.input!, completed('resp_1', [message('hi'), { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}', status: 'completed' }]));
    const next = conversation.splice({ model: 'm', previous_response_id: 'resp_1', input: [{ type: 'function_call_output', call_id: 'call_1', output: 'ok' }] });
    expect(next.body.previous_response_id).toBeUndefined();
    expect((next.body.input as Array<{ type: string }>).map((item) => item.type)).toEqual(['message', 'message', 'function_call', 'function_call_output']);
    expect(next.input).toBe(next.body.input);
  });

  it('leaves a stored last response to the HTTP route (which names it), and still keeps the whole input', () => {
    const conversation = new SocketConversation();
    const first = conversation.splice({ model: 'm', input: 'one' });
    conversation.remember(first.input!, { ...completed('resp_1', [message('hi')]), store: true });
    const body = { model: 'm', previous_response_id: 'resp_1', input: 'two' };
    const next = conversation.splice(body);
    expect(next.body).toBe(body);
    expect((next.input as Array<{ role: string }>).map((item) => item.role)).toEqual(['user', 'assistant', 'user']);
  });

  it('leaves any other previous_response_id to the HTTP route, and remembers nothing from it', () => {
    const conversation = new SocketConversation();
    conversation.remember([], completed('resp_1', []));
    const body = { model: 'm', previous_response_id: 'resp_stored', input: 'more' };
    expect(conversation.splice(body)).toEqual({ body, input: undefined });
  });

  it('forgets: a later turn naming the forgotten id goes to the HTTP route', () => {
    const conversation = new SocketConversation();
    conversation.remember([], completed('resp_1', []));
    conversation.forget();
    const body = { model: 'm', previous_response_id: 'resp_1', input: 'x' };
    expect(conversation.splice(body).input).toBeUndefined();
  });
});
