/**
 * `POST /v1/audio/speech` (docs/wire-protocols.md §10) as a whole answer (whole-answer.ts) whose
 * body is audio, streamed to the client as the upstream produces it. No usage comes back, so the
 * bill is known before the call: the input's characters at the model's `characters` price (per 1M
 * characters; its `input` price when it has none), held exactly and settled before the first byte.
 */
import { GatewayError } from '../../../../errors/gateway-error.js';
import { decodeSpeechRequest, speechCharacters, type SpeechRequest } from '../../../../protocol/speech.js';
import { utf8Length } from '../../../../protocol/tokens.js';
import { servesEndpoint } from '../../../../routing/catalog.js';
import { jsonOf, type WholeEndpoint } from '../../whole-answer.js';

export const speechEndpoint: WholeEndpoint<SpeechRequest> = {
  surface: 'speech',
  decode: (body) => decodeSpeechRequest(jsonOf(body)),
  // The audio bills the characters; the events (`sse`) bill the tokens their last one reports,
  // held at most a token per byte of the text and the model's output limit.
  countInput: () => 0,
  inputBound: (request) => (request.stream ? utf8Length(request.input) + utf8Length(request.instructions ?? '') : 0),
  hold: (request, _prices, model) => ({ units: { characters: speechCharacters(request.input) }, ...(request.stream ? { maxOutputTokens: model.maxOutputTokens } : {}) }),
  serves: (target) => servesEndpoint(target.provider, 'speech'),
  async call(target, request, body, signal, requestId) {
    const speak = target.provider.speak;
    if (speak === undefined) throw new GatewayError('model_unavailable');
    const spoken = await speak({ upstreamModel: target.upstreamModel, request, body: jsonOf(body), signal, requestId });
    if ('events' in spoken) return { body: {}, events: spoken.events };
    return { body: {}, binary: { contentType: spoken.contentType, stream: spoken.audio } };
  },
  answer: () => ({}),
};
