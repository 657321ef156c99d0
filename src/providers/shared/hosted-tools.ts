/**
 * Hosted Responses tools on routes that translate the request. Only a Responses upstream runs them
 * as sent; Anthropic and Gemini have their own web search, which the catalog may map a Responses
 * `web_search` tool to (`hosted_tools: map`, off by default). Everything else is left out, and the
 * gateway names what it left out in `x-tollgate-dropped-tools` (see http/v1/answer.ts).
 */
import type { CanonicalRequest, HostedTool } from '../../protocol/canonical.js';

/** Every name OpenAI has given its web search tool. */
const WEB_SEARCH_TYPES: ReadonlySet<string> = new Set(['web_search', 'web_search_preview', 'web_search_2025_08_26', 'web_search_preview_2025_03_11']);

export function isWebSearch(tool: HostedTool): boolean {
  return WEB_SEARCH_TYPES.has(tool.type);
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
