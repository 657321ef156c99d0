/**
 * Chat Completions bodies as an OpenAI upstream sends them, for the doubles of tests that only need
 * a small whole answer or content chunks (test-only).
 */

/** A whole `chat.completion` saying "hello": 5 tokens in, 1 out. */
export const CHAT_COMPLETION = JSON.stringify({
  id: 'chatcmpl-x',
  object: 'chat.completion',
  created: 1,
  model: 'upstream-model',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
});

/** One SSE frame of a content chunk carrying `content`. */
export const chatChunk = (content: string): string =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream-model', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
