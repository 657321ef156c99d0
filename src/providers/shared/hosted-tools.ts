/**
 * Hosted tools on routes that translate the request (docs/wire-protocols.md §3.4). A
 * Responses `web_search` tool and Anthropic's web search server tool (`web_search_20250305`) are
 * both a web search: a Responses upstream, Anthropic and Gemini each have one of their own, which
 * the catalog may map either to (`hosted_tools: map`, off by default). Every other hosted or server
 * tool runs only on an upstream of the client's own wire; translated routes leave it out, and the
 * gateway names what it left out in `x-tollgate-dropped-tools` (see http/v1/answer.ts).
 */
import type { CanonicalRequest, HostedTool } from '../../protocol/canonical.js';

/** Every name OpenAI has given its web search tool. */
const WEB_SEARCH_TYPES: ReadonlySet<string> = new Set(['web_search', 'web_search_preview', 'web_search_2025_08_26', 'web_search_preview_2025_03_11']);

/** Anthropic's web search server tool, in every version (`web_search_20250305`, …). */
const ANTHROPIC_WEB_SEARCH = /^web_search_\d{8}$/;

export function isWebSearch(tool: HostedTool): boolean {
  return tool.wire === 'anthropic' ? ANTHROPIC_WEB_SEARCH.test(tool.type) : WEB_SEARCH_TYPES.has(tool.type);
}

/** The web search tools a provider with its own web search sends, when the catalog maps them. */
export function mappedWebSearch(request: CanonicalRequest): HostedTool[] {
  if (request.mapHostedTools !== true) return [];
  return (request.hostedTools ?? []).filter(isWebSearch);
}

/** For providers with a web search of their own: a web search tool, when the catalog maps it. */
export function keepsMappedWebSearch(tool: HostedTool, request: CanonicalRequest): boolean {
  return request.mapHostedTools === true && isWebSearch(tool);
}

/**
 * A hosted tool as a Responses upstream takes it, or undefined when it has no place there: a
 * Responses tool as the client sent it; an Anthropic web search, when mapped, as Responses' own
 * `web_search` (its domain list as `filters.allowed_domains`); any other Anthropic server tool never.
 */
export function responsesTool(tool: HostedTool, request: CanonicalRequest): Readonly<Record<string, unknown>> | undefined {
  if (tool.wire === undefined) return tool.raw;
  if (!keepsMappedWebSearch(tool, request)) return undefined;
  const domains = tool.raw.allowed_domains;
  const allowed = Array.isArray(domains) && domains.length > 0 && domains.every((domain) => typeof domain === 'string') ? domains : undefined;
  return allowed === undefined ? { type: 'web_search' } : { type: 'web_search', filters: { allowed_domains: allowed } };
}
