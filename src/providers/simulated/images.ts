/**
 * The simulated provider's images (docs/wire-protocols.md §16): deterministic PNGs of one colour
 * drawn from the prompt (an edit's from the prompt and its files' sizes), always PNG whatever
 * `output_format` asks (the answer says `png`), as `b64_json`, or as a `data:` URL when
 * `response_format` is `url`. To stay cheap the picture is the requested size scaled down to at
 * most 256 pixels on its longer side (a 1024x1024 request gets a 256x256 PNG); the answer's `size`
 * is the size asked for (`auto`: 1024x1024). Usage is reported in tokens as gpt-image-1 does:
 * the prompt's tokens, SIMULATED_INPUT_IMAGE_TOKENS per input image and mask, and per image made
 * the output tokens gpt-image-1 documents for its quality (`auto` and `standard`: medium, `hd`:
 * high) and shape (square, or not). With `stream`: `partial_images` lighter partial images,
 * `pace_ms` apart, then the `completed` event with the usage. Failure modes as for answers.
 */
import { deflateSync, crc32 } from 'node:zlib';
import type { SimulatedProviderConfig } from '../../config/schema.js';
import { runYielding } from '../../lib/run-yielding.js';
import { imageEventTypes, inputImageCount, type ImageGenerationRequest } from '../../protocol/images.js';
import { countTexts } from '../../protocol/tokens.js';
import type { ImageStreamEvent, ImagesCall, ImagesResult } from '../provider.js';
import { abortableSleep } from './abortable-sleep.js';
import { hashString } from './deterministic-random.js';
import { startWholeCall } from './whole-call.js';

/** The longest side of the pictures the simulated provider draws. */
export const SIMULATED_IMAGE_MAX_SIDE = 256;
/** Tokens reported per input image (and mask) of an edit. */
export const SIMULATED_INPUT_IMAGE_TOKENS = 323;
/** gpt-image-1's output tokens per image, by quality, for a square image and for 1536x1024 or 1024x1536. */
export const SIMULATED_OUTPUT_TOKENS: Readonly<Record<'low' | 'medium' | 'high', { square: number; oblong: number }>> = {
  low: { square: 272, oblong: 408 },
  medium: { square: 1_056, oblong: 1_584 },
  high: { square: 4_160, oblong: 6_240 },
};

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

/** A valid PNG of `width`×`height` pixels of one RGB colour. */
export function solidPng(width: number, height: number, rgb: readonly [number, number, number]): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bits per sample
  header[9] = 2; // colour type: RGB
  const row = Buffer.alloc(1 + width * 3);
  for (let x = 0; x < width; x += 1) row.set(rgb, 1 + x * 3);
  const pixels = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(pixels)), chunk('IEND', Buffer.alloc(0))]);
}

/** The pixel size drawn for a requested size: scaled down to SIMULATED_IMAGE_MAX_SIDE on its longer side. */
export function drawnSize(size: string): { width: number; height: number } {
  const [width, height] = size.split('x').map(Number) as [number, number];
  const scale = Math.min(1, SIMULATED_IMAGE_MAX_SIDE / Math.max(width, height));
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

/** The size and quality the simulated provider makes for a request (`auto` resolved). */
export function simulatedTier(request: ImageGenerationRequest): { size: string; quality: string } {
  return { size: request.size === 'auto' ? '1024x1024' : request.size, quality: request.quality === 'auto' ? 'medium' : request.quality };
}

/** The output tokens reported for one image of `size` and `quality`. */
export function simulatedOutputTokens(size: string, quality: string): number {
  const level = quality === 'low' ? 'low' : quality === 'high' || quality === 'hd' ? 'high' : 'medium';
  const [width, height] = size.split('x');
  return SIMULATED_OUTPUT_TOKENS[level][width === height ? 'square' : 'oblong'];
}

function colourOf(seed: string, shade: number): [number, number, number] {
  const hash = hashString(seed);
  return [(hash & 0xff) * shade, ((hash >>> 8) & 0xff) * shade, ((hash >>> 16) & 0xff) * shade].map(Math.round) as [number, number, number];
}

export async function simulateImages(config: SimulatedProviderConfig, call: ImagesCall): Promise<ImagesResult> {
  await startWholeCall(config, call.signal);
  const request = call.body.request;
  const { size, quality } = simulatedTier(request);
  const { width, height } = drawnSize(size);
  const seed = call.body.kind === 'edit' ? `${request.prompt}\u0000${call.body.request.images.map((image) => image.size).join(',')}` : request.prompt;
  const textTokens = await runYielding(countTexts([request.prompt]));
  const imageTokens = inputImageCount(request) * SIMULATED_INPUT_IMAGE_TOKENS;
  const outputTokens = request.n * simulatedOutputTokens(size, quality);
  const usage = {
    total_tokens: textTokens + imageTokens + outputTokens,
    input_tokens: textTokens + imageTokens,
    output_tokens: outputTokens,
    input_tokens_details: { text_tokens: textTokens, image_tokens: imageTokens },
  };
  const created = Math.floor(Date.now() / 1000);
  const echo = { size, quality, background: request.background === 'transparent' ? 'transparent' : 'opaque', output_format: 'png' };
  const picture = (index: number, shade = 1): string => solidPng(width, height, colourOf(`${seed}\u0000${index}`, shade)).toString('base64');
  if (request.stream) return { kind: 'stream', events: streamEvents(config, call, { picture, created, echo, usage }) };
  const data = Array.from({ length: request.n }, (_, index) => (request.responseFormat === 'url' ? { url: `data:image/png;base64,${picture(index)}` } : { b64_json: picture(index) }));
  return { kind: 'json', body: { created, data, ...echo, usage } };
}

async function* streamEvents(
  config: SimulatedProviderConfig,
  call: ImagesCall,
  answer: { picture: (index: number, shade?: number) => string; created: number; echo: Record<string, string>; usage: Record<string, unknown> },
): AsyncGenerator<ImageStreamEvent> {
  const types = imageEventTypes(call.body.kind === 'edit');
  const partials = call.body.request.partialImages;
  for (let index = 0; index < partials; index += 1) {
    if (index > 0 && !(await abortableSleep(config.pace_ms, call.signal))) return;
    const data = { type: types.partial, b64_json: answer.picture(0, (index + 1) / (partials + 1)), created_at: answer.created, ...answer.echo, partial_image_index: index };
    yield { event: types.partial, data };
  }
  if (partials > 0 && !(await abortableSleep(config.pace_ms, call.signal))) return;
  yield { event: types.completed, data: { type: types.completed, b64_json: answer.picture(0), created_at: answer.created, ...answer.echo, usage: answer.usage } };
}
