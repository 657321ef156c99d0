/**
 * The function the end-to-end suites give models to call (a city's weather), in the Responses
 * form, and the text of a message's content as the upstream doubles read it.
 */
import type OpenAI from 'openai';

/** A strict Responses function tool. */
export const weatherTool: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};

/** The text of a message's content: a string, or parts with `text`. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part: { text?: unknown }) => (typeof part.text === 'string' ? part.text : '')).join('');
}
