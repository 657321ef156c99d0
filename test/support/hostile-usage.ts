/**
 * What a misbehaving upstream reports as usage, chosen by a marker in the last user message: an
 * honest upstream counts every byte of the body it was sent (a quarter token per byte, as OpenAI's
 * tokenizer roughly does for JSON), `report-100x` claims a hundred times that, `report-absurd`
 * 10^12 tokens, `report-negative` negative counts, `report-no-counts` a usage object without the
 * input and output counts (only a total). Test-only code.
 */
export const HONEST_OUTPUT_TOKENS = 5;

export function hostileUsage(body: Record<string, unknown>, bodyBytes: number): Record<string, unknown> {
  const text = JSON.stringify(body.messages ?? body.input ?? '');
  if (text.includes('report-no-counts')) return { total_tokens: 42 };
  const honest = Math.ceil(bodyBytes / 4);
  const [input, output] = text.includes('report-100x')
    ? [100 * honest, HONEST_OUTPUT_TOKENS]
    : text.includes('report-absurd')
      ? [1e12, 1e12]
      : text.includes('report-negative')
        ? [-5, -7]
        : [honest, HONEST_OUTPUT_TOKENS];
  return { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
}
