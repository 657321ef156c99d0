/**
 * Anthropic's `cache_control` (`{type: "ephemeral", ttl?: "5m" | "1h"}`) read into canonical
 * prompt-cache breakpoints, so that a translated route can send the client's breakpoints on
 * (docs/wire-protocols.md §21). A value that is not an object is refused, as Anthropic refuses it;
 * a type or ttl newer than this code is accepted (a pass-through sends it as is) and reads as no
 * breakpoint, or one of the default lifetime.
 */
import type { CacheBreakpoint, FunctionTool } from '../canonical.js';
import { optionalArray, optionalRecord, optionalString } from '../field-checks.js';

/** The breakpoint a block's `cache_control` asks for, or undefined when it asks none. */
export function cacheBreakpoint(value: unknown, param: string): CacheBreakpoint | undefined {
  const control = optionalRecord(value, param);
  if (control === undefined || optionalString(control.type, `${param}.type`) !== 'ephemeral') return undefined;
  const ttl = optionalString(control.ttl, `${param}.ttl`);
  return ttl === '5m' || ttl === '1h' ? { ttl } : {};
}

/**
 * Marks the decoded tools whose declaration carries `cache_control`, found by name (Anthropic's
 * tool names are unique). A marked tool that is not in `tools` (a server tool, which translated
 * routes do without) passes its breakpoint to the last decoded tool before it.
 */
export function markCachedTools(value: unknown, tools: FunctionTool[]): void {
  const declared = optionalArray(value, 'tools') ?? [];
  let previous: FunctionTool | undefined;
  declared.forEach((entry, index) => {
    const raw = optionalRecord(entry, `tools[${index}]`);
    const tool = typeof raw?.name === 'string' ? tools.find((candidate) => candidate.name === raw.name) : undefined;
    const breakpoint = cacheBreakpoint(raw?.cache_control, `tools[${index}].cache_control`);
    const holder = tool ?? previous;
    if (breakpoint !== undefined && holder !== undefined) holder.cache = breakpoint;
    if (tool !== undefined) previous = tool;
  });
}
