/**
 * Where a translated request's prompt-cache breakpoints go, for the upstreams whose cache reads
 * only what a breakpoint covers: Anthropic's `cache_control` (messages-request.ts) and Bedrock's
 * `cachePoint` (bedrock/converse-request.ts), both over Anthropic's layout of a prompt: tools, then
 * system, then messages (docs/wire-protocols.md §21).
 *
 * - A client that places breakpoints itself (Anthropic Messages, `cacheMarked`) gets its own, and
 *   no others; of more than Anthropic's four, the last four are kept (a later breakpoint covers
 *   everything an earlier one did).
 * - Any other client (OpenAI's surfaces cannot say) gets two: one at the end of the tools and
 *   system (the prefix every turn of a conversation shares) and one on the last block of the
 *   conversation, so the next turn, which resends all of it, reads it from the cache.
 */
import type { CacheBreakpoint } from '../../protocol/canonical.js';

/** Anthropic's most breakpoints in one request. */
export const MAX_CACHE_BREAKPOINTS = 4;

/** Anthropic's `cache_control`. */
export interface CacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

/** A block that may carry a breakpoint: a tool, a system block, a message's content block. */
export interface CacheHolder {
  cache_control?: CacheControl;
}

/** `cache_control` for a canonical breakpoint, to spread into a block (nothing for none). */
export function cacheControlOf(cache: CacheBreakpoint | undefined): { cache_control?: CacheControl } {
  if (cache === undefined) return {};
  return { cache_control: cache.ttl === undefined ? { type: 'ephemeral' } : { type: 'ephemeral', ttl: cache.ttl } };
}

/** A prompt laid out Anthropic's way, its blocks carrying the client's breakpoints. */
export interface CacheLayout {
  tools: readonly CacheHolder[];
  system: readonly CacheHolder[];
  messages: ReadonlyArray<{ content: readonly CacheHolder[] }>;
}

/** Sets the breakpoints of `layout` in place (see the file comment). */
export function placeCacheBreakpoints(layout: CacheLayout, clientPlaces: boolean): void {
  if (!clientPlaces) {
    const prefixEnd = layout.system.at(-1) ?? layout.tools.at(-1);
    const conversationEnd = layout.messages.at(-1)?.content.at(-1);
    for (const holder of [prefixEnd, conversationEnd]) if (holder !== undefined) holder.cache_control = { type: 'ephemeral' };
  }
  const marked = [...layout.tools, ...layout.system, ...layout.messages.flatMap((message) => message.content)].filter((holder) => holder.cache_control !== undefined);
  for (const holder of marked.slice(0, Math.max(0, marked.length - MAX_CACHE_BREAKPOINTS))) delete holder.cache_control;
}
