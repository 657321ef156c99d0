/**
 * `POST /v1/images/generations` (docs/wire-protocols.md §8, §16) as a whole answer
 * (whole-answer.ts): a JSON body, passed through with the upstream's model name; the upstream's
 * JSON answer as it is, or with `stream: true` its events relayed (whole-stream.ts). Held and
 * billed per image or by tokens, as image-answers.ts says.
 */
import { countImageInputTokens, decodeImageGenerationRequest, type ImageGenerationRequest } from '../../../../protocol/images.js';
import { servesEndpoint } from '../../../../routing/catalog.js';
import { jsonOf, type WholeEndpoint } from '../../whole-answer.js';
import { callImages, holdImages, imageInputBound } from './image-answers.js';

export const imageGenerationsEndpoint: WholeEndpoint<ImageGenerationRequest> = {
  surface: 'image-generations',
  decode: (body) => decodeImageGenerationRequest(jsonOf(body)),
  countInput: (request) => () => countImageInputTokens(request),
  inputBound: imageInputBound,
  hold: holdImages,
  serves: (target) => servesEndpoint(target.provider, 'image-generations'),
  call: (target, request, body, signal, requestId, prices) => callImages(target, { body: { kind: 'generation', request, json: jsonOf(body) }, signal, requestId }, prices),
  answer: (result) => result.body,
};
