/**
 * Decides what the simulated model answers — text, one tool call or two parallel ones, with or
 * without reasoning first — and cuts it to the output budget. Pure: the provider only paces the
 * planned events and injects failures.
 */
import type { CanonicalEvent, CanonicalRequest, FinishReason, FunctionTool, RequestedEffort, Usage } from '../../protocol/canonical.js';
import { UpstreamError, type ProviderCall } from '../provider.js';
import { answerText, inputSeed, lastUserText, reasoningText, trailingToolOutputs } from './answer.js';
import { deterministicId } from './deterministic-random.js';
import { estimateInputTokens } from '../../protocol/tokens.js';
import { splitIntoPieces, splitIntoTokenChunks, truncateToTokens } from './token-count.js';
import { toolArgumentsFromSchema, wordsOf } from './tool-arguments.js';

/**
 * Reasoning tokens billed per effort (before the output cap). Only a short summary of them is
 * streamed, as real upstreams do: reasoning tokens are billed, not shown.
 */
export const REASONING_TOKENS: Readonly<Record<RequestedEffort, number>> = Object.freeze({
  none: 0,
  minimal: 8,
  low: 32,
  medium: 128,
  high: 512,
  xhigh: 1024,
  max: 2048,
});

/** Tokens per streamed text or reasoning chunk. */
export const TOKENS_PER_CHUNK = 3;
/** A tool call's arguments are streamed in up to this many pieces. */
const ARGUMENT_PIECES = 3;

/** What the simulated model will stream after `response-start`. */
export interface AnswerPlan {
  /** Reasoning, text and tool-call events, in order. */
  deltas: CanonicalEvent[];
  usage: Usage;
  finishReason: FinishReason;
}

/** The tools to call, or none for a text answer. */
function chooseTools(request: CanonicalRequest): FunctionTool[] {
  const choice = request.toolChoice;
  if (request.tools.length === 0 || choice === 'none') return [];
  // The model has just been given tool results: it answers them in words.
  if (trailingToolOutputs(request).length > 0) return [];
  if (typeof choice === 'object') {
    const named = request.tools.find((tool) => tool.name === choice.name);
    if (named === undefined) {
      const message = `Tool choice '${choice.name}' not found in 'tools' parameter.`;
      throw new UpstreamError('status', `simulated upstream rejected the request: ${message}`, { status: 400, clientMessage: message });
    }
    return [named];
  }
  return request.parallelToolCalls !== false && request.tools.length >= 2 ? request.tools.slice(0, 2) : request.tools.slice(0, 1);
}

/**
 * Plans the answer to `request`. Output tokens (reasoning included) never exceed
 * `call.maxOutputTokens`: reasoning takes its share first, and visible text or tool arguments
 * beyond what is left are cut at a token boundary with finish reason `length`.
 *
 * @throws UpstreamError (`status` 400) when `toolChoice` names a tool that is not in `tools`.
 */
export function planAnswer(request: CanonicalRequest, call: Pick<ProviderCall, 'upstreamModel' | 'maxOutputTokens'>): AnswerPlan {
  const tools = chooseTools(request);
  const budget = Number.isFinite(call.maxOutputTokens) ? Math.max(0, Math.floor(call.maxOutputTokens)) : 0;
  const deltas: CanonicalEvent[] = [];

  let reasoningTokens = 0;
  if (request.reasoningEffort !== undefined) {
    reasoningTokens = Math.min(REASONING_TOKENS[request.reasoningEffort], budget);
    if (reasoningTokens > 0) {
      for (const delta of splitIntoTokenChunks(reasoningText(request, request.reasoningEffort), TOKENS_PER_CHUNK)) {
        deltas.push({ type: 'reasoning-delta', delta });
      }
    }
  }

  let remaining = budget - reasoningTokens;
  let visibleTokens = 0;
  let truncated = false;
  if (tools.length === 0) {
    const text = truncateToTokens(answerText(request, call.upstreamModel), remaining);
    for (const delta of splitIntoTokenChunks(text.text, TOKENS_PER_CHUNK)) deltas.push({ type: 'text-delta', delta });
    visibleTokens = text.tokens;
    truncated = text.truncated;
  } else {
    const seed = inputSeed(request);
    const words = wordsOf(lastUserText(request));
    for (const [index, tool] of tools.entries()) {
      if (remaining <= 0) {
        truncated = true;
        break;
      }
      const callArguments = truncateToTokens(toolArgumentsFromSchema(tool.parameters, words), remaining);
      deltas.push({ type: 'tool-call-start', index, callId: `call_${deterministicId(`${seed}:${index}:${tool.name}`)}`, name: tool.name });
      for (const delta of splitIntoPieces(callArguments.text, ARGUMENT_PIECES)) deltas.push({ type: 'tool-call-delta', index, delta });
      deltas.push({ type: 'tool-call-end', index });
      visibleTokens += callArguments.tokens;
      remaining -= callArguments.tokens;
      if (callArguments.truncated) {
        truncated = true;
        break;
      }
    }
  }

  return {
    deltas,
    usage: {
      // The gateway's own estimate, so the simulated upstream bills input exactly as held.
      inputTokens: estimateInputTokens(request),
      cachedInputTokens: 0,
      outputTokens: visibleTokens + reasoningTokens,
      reasoningTokens,
    },
    finishReason: truncated ? 'length' : tools.length > 0 ? 'tool_calls' : 'stop',
  };
}
