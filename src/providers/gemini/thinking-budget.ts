/**
 * Reasoning effort → Gemini `thinkingConfig.thinkingBudget` (tokens of thinking allowed).
 * Budget ranges per model: https://ai.google.dev/gemini-api/docs/thinking#set-budget
 * (2.5 Pro 128–32768, 2.5 Flash 0–24576, 2.5 Flash-Lite 512–24576; a value outside the model's
 * range is a 400). Gemini 3 models accept `thinkingBudget` too, for backwards compatibility.
 */
import type { ReasoningEffort } from '../../protocol/canonical.js';

/**
 * Budget per effort. `low` and `medium` are the values of Google's own OpenAI-compatible endpoint
 * (https://ai.google.dev/gemini-api/docs/openai#thinking); the rest climb to 24576, the largest
 * budget every 2.5 model accepts, so that no effort is refused by a Flash model.
 *
 * | effort | thinkingBudget |
 * |---|---|
 * | low | 1024 |
 * | medium | 8192 |
 * | high | 16384 |
 * | xhigh | 20480 |
 * | max | 24576 |
 */
export const THINKING_BUDGETS: Readonly<Record<ReasoningEffort, number>> = Object.freeze({
  low: 1_024,
  medium: 8_192,
  high: 16_384,
  xhigh: 20_480,
  max: 24_576,
});

/** The smallest budget every thinking model accepts (Flash-Lite's floor). */
const MIN_BUDGET = 512;

/**
 * The budget to send. Gemini counts thinking against `maxOutputTokens`, so the budget is held to
 * three quarters of the output cap: a model that spent the whole cap thinking would end with
 * `MAX_TOKENS` and no answer, yet be billed for it.
 */
export function thinkingBudgetFor(effort: ReasoningEffort | 'minimal', maxOutputTokens: number): number {
  const ceiling = Math.floor((maxOutputTokens * 3) / 4);
  // OpenAI's `minimal`: the smallest budget every thinking model accepts.
  if (effort === 'minimal') return MIN_BUDGET;
  return Math.max(MIN_BUDGET, Math.min(THINKING_BUDGETS[effort], ceiling));
}
