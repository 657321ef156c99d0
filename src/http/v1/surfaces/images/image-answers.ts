/**
 * What both image endpoints share (docs/wire-protocols.md §16): the hold, the call and the bill,
 * "as the upstream bills". A model priced per image (`prices.image`) holds the images asked for
 * at the tier of the size and quality asked for (the dearest that can match `auto`; a 400 on
 * `size` when it has no price that can), and is billed the images the answer holds at the tier it
 * says it made (its `size` and `quality`), else at the tier held; tokens the upstream reports are
 * not billed on top. Any other model is billed by the tokens the upstream reports (GPT image
 * models: `usage`, its image input tokens at the `image_input` price): held for the bound of the
 * prompt and the input files, plus the model's `max_output_tokens` per image. A stream's
 * `completed` event carries the report and is billed before it goes out (whole-stream.ts).
 */
import { imageTier, type ModelPrices } from '../../../../billing/prices.js';
import { GatewayError } from '../../../../errors/gateway-error.js';
import { InvalidRequestError, ZERO_USAGE, type Usage } from '../../../../protocol/canonical.js';
import { chosenImageTier, imageEventTypes, inputImageCount, usageOfImageAnswer, type ImageGenerationRequest } from '../../../../protocol/images.js';
import { countTexts } from '../../../../protocol/tokens.js';
import type { ImageStreamEvent, ImagesCall } from '../../../../providers/provider.js';
import type { ModelEntry, Target } from '../../../../routing/catalog.js';
import type { WholeHold, WholeResult } from '../../whole-answer.js';
import type { WholeFrame } from '../../whole-stream.js';

/** Whether the model is priced per image rather than by tokens. */
function pricedPerImage(prices: ModelPrices): boolean {
  return prices.perImage !== undefined && prices.perImage.size > 0;
}

/** The tier a per-image request is held at, or the 400 naming `size` when the model has no price for it. */
function heldTier(request: ImageGenerationRequest, prices: ModelPrices): string {
  const tier = imageTier(prices, request.size, request.quality);
  if (tier === undefined) {
    throw new InvalidRequestError(`The model '${request.model}' has no price for images of size '${request.size}' at quality '${request.quality}'.`, 'size', 'invalid_value');
  }
  return tier;
}

export function holdImages(request: ImageGenerationRequest, prices: ModelPrices, model: ModelEntry): WholeHold {
  if (pricedPerImage(prices)) return { units: { images: request.n, imageTier: heldTier(request, prices) } };
  return { maxOutputTokens: request.n * model.maxOutputTokens };
}

/**
 * The hold's input: the prompt's tokens (counted as the bill counts them when no usage comes; the
 * model's margin covers another tokenizer, billing/input-bounds.ts), and the most one image costs
 * per input file (edits).
 */
export function imageInputBound(request: ImageGenerationRequest, _model: ModelEntry, imageTokens: number): number {
  const counting = countTexts([request.prompt]);
  let step = counting.next();
  while (step.done !== true) step = counting.next();
  return step.value + inputImageCount(request) * imageTokens;
}

/** What an answer (or a stream's `completed` event) reports for the bill, making `images` images. */
function reportOf(answer: Readonly<Record<string, unknown>>, request: ImageGenerationRequest, prices: ModelPrices, images: number): { reportedUsage?: Usage; units?: WholeResult['units'] } {
  if (pricedPerImage(prices)) {
    const chosen = chosenImageTier(answer, request);
    const tier = imageTier(prices, chosen.size, chosen.quality) ?? heldTier(request, prices);
    // Billed per image only: the tokens a GPT image model also reports are not billed on top.
    return { reportedUsage: ZERO_USAGE, units: { images, imageTier: tier } };
  }
  const usage = usageOfImageAnswer(answer);
  return usage === undefined ? {} : { reportedUsage: usage };
}

/** The frames of a streamed answer; the `completed` event is the last, with the report. */
async function* framesOf(events: AsyncIterable<ImageStreamEvent>, request: ImageGenerationRequest, prices: ModelPrices, completed: string): AsyncGenerator<WholeFrame> {
  for await (const { event, data } of events) {
    const frame = { ...(event === undefined ? {} : { event }), data };
    if (data.type !== completed) {
      yield frame;
      continue;
    }
    yield { ...frame, event: event ?? completed, report: reportOf(data, request, prices, 1) };
    return;
  }
}

/** One call on one target, its answer (JSON, or events) with what it reports for the bill. */
export async function callImages(target: Target, call: Omit<ImagesCall, 'upstreamModel'>, prices: ModelPrices): Promise<WholeResult> {
  const images = target.provider.images;
  if (images === undefined) throw new GatewayError('model_unavailable');
  const request = call.body.request;
  const result = await images({ ...call, upstreamModel: target.upstreamModel });
  if (result.kind === 'stream') return { body: {}, events: framesOf(result.events, request, prices, imageEventTypes(call.body.kind === 'edit').completed) };
  const made = Array.isArray(result.body.data) ? result.body.data.length : request.n;
  return { body: result.body, ...reportOf(result.body, request, prices, made) };
}
