/**
 * `POST /v1/audio/speech` (docs/wire-protocols.md §10) as a whole answer (whole-answer.ts) whose
 * body is audio, streamed to the client as the upstream produces it. No usage comes back, so the
 * bill is known before the call: the input's characters at the model's `characters` price (per 1M
 * characters; its `input` price when it has none), held exactly and settled before the first byte.
 */
import { GatewayError } from '../../../../errors/gateway-error.js';
import { decodeSpeechRequest, speechCharacters, type SpeechRequest } from '../../../../protocol/speech.js';
import { servesEndpoint } from '../../../../routing/catalog.js';
import { jsonOf, type WholeEndpoint } from '../../whole-answer.js';

export const speechEndpoint: WholeEndpoint<SpeechRequest> = {
  surface: 'speech',
  decode: (body) => decodeSpeechRequest(jsonOf(body)),
  countInput: () => 0,
  inputBound: () => 0,
  hold: (request) => ({ units: { characters: speechCharacters(request.input) } }),
  serves: (target) => servesEndpoint(target.provider, 'speech'),
  async call(target, request, body, signal, requestId) {
    const speak = target.provider.speak;
    if (speak === undefined) throw new GatewayError('model_unavailable');
    const { contentType, audio } = await speak({ upstreamModel: target.upstreamModel, request, body: jsonOf(body), signal, requestId });
    return { body: {}, binary: { contentType, stream: audio } };
  },
  answer: () => ({}),
};
