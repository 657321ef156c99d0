/**
 * Reasoning efforts a provider cannot honour in full. Anthropic (also Claude on Bedrock) and Gemini think within the output
 * cap, so a model whose `max_output_tokens` is below an effort's thinking budget gets a smaller
 * budget (or, on Anthropic, none at all) than the effort asks for. The gateway names each such
 * model and effort at start, so an operator learns of it before a client does (README, "Reasoning
 * effort"). OpenAI-compatible upstreams get the effort itself and choose their own budget.
 */
import type { ConfigFile } from '../../config/schema.js';
import { REASONING_EFFORTS, type ReasoningEffort } from '../../protocol/canonical.js';
import { ANSWER_RESERVE_TOKENS, MIN_THINKING_BUDGET, THINKING_BUDGETS as ANTHROPIC_BUDGETS } from '../anthropic/messages-request.js';
import { isClaudeModel } from '../bedrock/converse-request.js';
import { THINKING_BUDGETS as GEMINI_BUDGETS, thinkingBudgetFor } from '../gemini/thinking-budget.js';

export interface DowngradedEffort {
  model: string;
  effort: ReasoningEffort;
  provider: string;
  providerType: 'anthropic' | 'gemini' | 'bedrock';
  /** The budget the effort asks for on this provider type. */
  budget: number;
  /** The budget sent instead (null: thinking is turned off). */
  sent: number | null;
  maxOutputTokens: number;
  /** The smallest `max_output_tokens` that lets the whole budget through. */
  neededMaxOutputTokens: number;
}

/** The thinking budget sent for an effort under an output cap, per provider type. */
export function sentBudget(providerType: 'anthropic' | 'gemini', effort: ReasoningEffort, maxOutputTokens: number): number | null {
  if (providerType === 'gemini') return thinkingBudgetFor(effort, maxOutputTokens);
  const budget = Math.min(ANTHROPIC_BUDGETS[effort], maxOutputTokens - ANSWER_RESERVE_TOKENS);
  return budget >= MIN_THINKING_BUDGET ? budget : null;
}

/** Every (model, allowed effort, Anthropic, Gemini or Bedrock Claude target) whose budget the cap cuts. */
export function downgradedEfforts(config: Pick<ConfigFile, 'models' | 'providers'>): DowngradedEffort[] {
  // Vertex AI's Gemini and Claude think as Gemini's and Anthropic's own APIs do.
  const typeOf = new Map(config.providers.map((provider) => [provider.name, provider.type === 'vertex' ? (provider.publisher === 'anthropic' ? 'anthropic' : 'gemini') : provider.type]));
  const found: DowngradedEffort[] = [];
  for (const model of config.models) {
    for (const target of model.targets) {
      const providerType = typeOf.get(target.provider);
      // Claude on Bedrock thinks with Anthropic's budgets (docs/wire-protocols.md §18.3).
      const budgets = providerType === 'bedrock' && isClaudeModel(target.model) ? 'anthropic' : providerType;
      if (budgets !== 'anthropic' && budgets !== 'gemini') continue;
      // Always true here; it tells the compiler which types are left.
      if (providerType !== 'anthropic' && providerType !== 'gemini' && providerType !== 'bedrock') continue;
      for (const effort of REASONING_EFFORTS.filter((candidate) => model.reasoning_efforts.includes(candidate))) {
        const budget = budgets === 'anthropic' ? ANTHROPIC_BUDGETS[effort] : GEMINI_BUDGETS[effort];
        const sent = sentBudget(budgets, effort, model.max_output_tokens);
        if (sent !== null && sent >= budget) continue;
        // Anthropic keeps room for the answer; Gemini holds thinking to three quarters of the cap.
        const neededMaxOutputTokens = budgets === 'anthropic' ? budget + ANSWER_RESERVE_TOKENS : Math.ceil((budget * 4) / 3);
        found.push({ model: model.id, effort, provider: target.provider, providerType, budget, sent, maxOutputTokens: model.max_output_tokens, neededMaxOutputTokens });
      }
    }
  }
  return found;
}

/** The start-up warning for one downgraded effort. */
export function describeDowngrade(downgrade: DowngradedEffort): string {
  const instead = downgrade.sent === null ? 'no thinking at all' : `a budget of ${downgrade.sent}`;
  return (
    `model ${downgrade.model}: reasoning effort '${downgrade.effort}' asks for ${downgrade.budget} thinking tokens on ${downgrade.providerType} ` +
    `provider "${downgrade.provider}", but max_output_tokens ${downgrade.maxOutputTokens} allows ${instead}; ` +
    `set max_output_tokens to at least ${downgrade.neededMaxOutputTokens} for the full budget`
  );
}
