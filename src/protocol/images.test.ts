import { describe, expect, it } from 'vitest';
import { decodeImageEditRequest, decodeImageGenerationRequest, usageOfImageAnswer } from './images.js';

const file = { filename: 'a.png', contentType: 'image/png', chunks: [Buffer.from('png')], size: 3 };

describe('image requests', () => {
  it('defaults size and quality to auto, n to 1, stream off', () => {
    expect(decodeImageGenerationRequest({ model: 'm', prompt: 'p' })).toEqual({ model: 'm', prompt: 'p', n: 1, size: 'auto', quality: 'auto', stream: false, partialImages: 0 });
  });

  it('reads an edit form: integers and booleans from their text, the files as given', () => {
    const texts = new Map([['model', 'm'], ['prompt', 'p'], ['n', '1'], ['stream', 'true'], ['partial_images', '2'], ['input_fidelity', 'high']]);
    expect(decodeImageEditRequest(texts, [file], file)).toMatchObject({ n: 1, stream: true, partialImages: 2, images: [file], mask: file });
    expect(() => decodeImageEditRequest(new Map([['model', 'm'], ['prompt', 'p'], ['stream', 'yes']]), [file], undefined)).toThrow("Invalid type for 'stream': expected a boolean, but got a string instead.");
    expect(() => decodeImageEditRequest(new Map([['model', 'm'], ['prompt', 'p']]), [], undefined)).toThrow("Missing required parameter: 'image'.");
    expect(() => decodeImageEditRequest(new Map([['model', 'm'], ['prompt', 'p'], ['moderation', 'low']]), [file], undefined)).toThrow('Unrecognized request argument supplied: moderation');
  });

  it('reads a GPT image usage report, image input tokens apart; none when it is not whole counts', () => {
    const usage = { input_tokens: 50, output_tokens: 4160, total_tokens: 4210, input_tokens_details: { text_tokens: 10, image_tokens: 40 } };
    expect(usageOfImageAnswer({ usage })).toEqual({ inputTokens: 50, cachedInputTokens: 0, outputTokens: 4160, reasoningTokens: 0, imageInputTokens: 40 });
    expect(usageOfImageAnswer({ usage: { ...usage, output_tokens: -1 } })).toBeUndefined();
    expect(usageOfImageAnswer({})).toBeUndefined();
  });
});
