/**
 * Where a Messages body goes and how it is dressed: Anthropic's own API takes every call at
 * `/messages` with the model in the body; Vertex AI's Claude names the model in its address and
 * wants `anthropic_version` in the body instead (docs/wire-protocols.md §4.2, §19.3).
 */
export interface MessagesWire {
  /** The path under the provider's base address of a call to `upstreamModel`, streamed or not. */
  path(upstreamModel: string, stream: boolean): string;
  /** The body as sent, from the body Anthropic's own API takes (`model` named in it). */
  body(body: object): unknown;
}

/** Anthropic's own API: `/messages`, the body as is. */
export const ANTHROPIC_API: MessagesWire = {
  path: () => '/messages',
  body: (body) => body,
};
