/**
 * Upstream answers that ran a web search, in each vendor's wire format, for the hosted web search
 * tests (the codecs' own and test/e2e/hosted-web-search.test.ts). Written after the vendors'
 * documented shapes: Anthropic's web search server tool (`server_tool_use`, `web_search_tool_result`,
 * text with `citations`, `usage.server_tool_use`), Gemini's Google Search grounding
 * (`groundingMetadata.webSearchQueries`), and OpenAI Responses' `web_search_call` item. Test-only code.
 */

export const SEARCH_QUERY = 'weather in Oslo today';
export const SEARCH_TEXT = 'Oslo is snowy today, -3 °C.';
export const SEARCH_URL = 'https://weather.example/oslo';

function frame(type: string, payload: Record<string, unknown>, named = true): string {
  const data = JSON.stringify({ type, ...payload });
  return named ? `event: ${type}\ndata: ${data}\n\n` : `data: ${data}\n\n`;
}

const searchResult = { type: 'web_search_result', title: 'Oslo weather', url: SEARCH_URL, encrypted_content: 'EqgfCioIARgBIiQ3YTAwMjY1Mi1', page_age: 'today' };
const citation = { type: 'web_search_result_location', url: SEARCH_URL, title: 'Oslo weather', encrypted_index: 'Eo8BCioIAhgBIiQyYjQ0OWJmZi1', cited_text: 'Snow, -3 °C' };
/** What Anthropic reports: one search, billed per use beside the tokens. */
export const ANTHROPIC_SEARCH_USAGE = { input_tokens: 2_100, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 42, server_tool_use: { web_search_requests: 1 } };

/** Anthropic's stream of a turn that searched: the search, its results, then cited text. */
export function anthropicSearchStream(): string {
  const id = 'srvtoolu_014hJH82Qum7Td6UV8gDXThB';
  const query = JSON.stringify({ query: SEARCH_QUERY });
  return [
    frame('message_start', { message: { id: 'msg_01', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, usage: { input_tokens: 2_100, output_tokens: 3 } } }),
    frame('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    frame('content_block_delta', { index: 0, delta: { type: 'text_delta', text: "I'll search. " } }),
    frame('content_block_stop', { index: 0 }),
    frame('content_block_start', { index: 1, content_block: { type: 'server_tool_use', id, name: 'web_search', input: {} } }),
    frame('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: query.slice(0, 9) } }),
    frame('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: query.slice(9) } }),
    frame('content_block_stop', { index: 1 }),
    frame('content_block_start', { index: 2, content_block: { type: 'web_search_tool_result', tool_use_id: id, content: [searchResult] } }),
    frame('content_block_stop', { index: 2 }),
    frame('content_block_start', { index: 3, content_block: { type: 'text', text: '', citations: [] } }),
    frame('content_block_delta', { index: 3, delta: { type: 'citations_delta', citation } }),
    frame('content_block_delta', { index: 3, delta: { type: 'text_delta', text: SEARCH_TEXT } }),
    frame('content_block_stop', { index: 3 }),
    frame('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: ANTHROPIC_SEARCH_USAGE }),
    frame('message_stop', {}),
  ].join('');
}

/** The same turn as one Message object (an upstream that answers JSON). */
export function anthropicSearchMessage(): Record<string, unknown> {
  const id = 'srvtoolu_014hJH82Qum7Td6UV8gDXThB';
  return {
    id: 'msg_01',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [
      { type: 'text', text: "I'll search. " },
      { type: 'server_tool_use', id, name: 'web_search', input: { query: SEARCH_QUERY } },
      { type: 'web_search_tool_result', tool_use_id: id, content: [searchResult] },
      { type: 'text', text: SEARCH_TEXT, citations: [citation] },
    ],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: ANTHROPIC_SEARCH_USAGE,
  };
}

/** Gemini's stream of a grounded answer: text, then the grounding metadata with the last chunk. */
export function geminiGroundedStream(): string {
  const usageMetadata = { promptTokenCount: 40, candidatesTokenCount: 12, totalTokenCount: 52 };
  const groundingMetadata = {
    webSearchQueries: [SEARCH_QUERY],
    groundingChunks: [{ web: { uri: SEARCH_URL, title: 'weather.example' } }],
    groundingSupports: [{ segment: { startIndex: 0, endIndex: 13, text: 'Oslo is snowy' }, groundingChunkIndices: [0] }],
    searchEntryPoint: { renderedContent: '<div></div>' },
  };
  const chunk = (body: Record<string, unknown>): string => `data: ${JSON.stringify(body)}\r\n\r\n`;
  return (
    chunk({ candidates: [{ content: { role: 'model', parts: [{ text: SEARCH_TEXT.slice(0, 13) }] }, index: 0 }], usageMetadata, modelVersion: 'gemini-2.5-flash' }) +
    chunk({ candidates: [{ content: { role: 'model', parts: [{ text: SEARCH_TEXT.slice(13) }] }, finishReason: 'STOP', index: 0, groundingMetadata }], usageMetadata, modelVersion: 'gemini-2.5-flash' })
  );
}

/** An OpenAI Responses stream that searched: a `web_search_call` item, then the message. */
export function responsesSearchStream(): string {
  const response = { id: 'resp_up', object: 'response', status: 'in_progress', output: [] };
  const searchItem = { id: 'ws_up', type: 'web_search_call', status: 'completed', action: { type: 'search', query: SEARCH_QUERY } };
  const message = { id: 'msg_up', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: SEARCH_TEXT, annotations: [] }] };
  const events: Array<[string, Record<string, unknown>]> = [
    ['response.created', { response }],
    ['response.output_item.added', { output_index: 0, item: { ...searchItem, status: 'in_progress' } }],
    ['response.web_search_call.in_progress', { output_index: 0, item_id: 'ws_up' }],
    ['response.web_search_call.searching', { output_index: 0, item_id: 'ws_up' }],
    ['response.web_search_call.completed', { output_index: 0, item_id: 'ws_up' }],
    ['response.output_item.done', { output_index: 0, item: searchItem }],
    ['response.output_item.added', { output_index: 1, item: { ...message, status: 'in_progress', content: [] } }],
    ['response.output_text.delta', { output_index: 1, item_id: 'msg_up', content_index: 0, delta: SEARCH_TEXT }],
    ['response.output_item.done', { output_index: 1, item: message }],
    ['response.completed', { response: { ...response, status: 'completed', output: [searchItem, message], usage: { input_tokens: 30, output_tokens: 9, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } } } }],
  ];
  return events.map(([type, payload], index) => frame(type, { sequence_number: index, ...payload })).join('');
}
