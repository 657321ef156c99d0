/**
 * Anthropic's server tools in a Messages request (`tools[]` entries with a `type` other than
 * `custom`: web search, web fetch, code execution, bash, the text editor, …). Only Anthropic runs
 * them, so the canonical request carries them as hosted tools in Anthropic's wire (`wire:
 * "anthropic"`): a pass-through sends them as the client did, a translated route maps a web search
 * to the upstream's own when the catalog says so and otherwise drops them, named in
 * `x-tollgate-dropped-tools`, or refuses them (docs/wire-protocols.md §3.4).
 */
import { InvalidRequestError, type HostedTool } from '../canonical.js';
import { clipEcho } from '../client-echo.js';

/** A server tool as a hosted tool; `raw` is the client's declaration as sent. */
export function serverTool(type: string, raw: Readonly<Record<string, unknown>>, index: number): HostedTool {
  return { type, raw, param: `tools[${index}].type`, wire: 'anthropic' };
}

/** The refusal a translated route gives a server tool when its model is set to refuse hosted tools. */
export function unsupportedServerTool(tool: HostedTool): InvalidRequestError {
  // Anthropic's error body has no `param`: the gateway puts it before the message (errors/error-shapes.ts).
  return new InvalidRequestError(
    `The server tool '${clipEcho(tool.type)}' is not supported with this model, whose route does not run Anthropic's server tools. Remove it from \`tools\`, or use a model served by Anthropic.`,
    tool.param,
    'unsupported_tool',
  );
}
