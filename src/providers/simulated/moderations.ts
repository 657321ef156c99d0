/**
 * The simulated provider's moderations: deterministic results in OpenAI's shape, one per string
 * input (one for a parts array). A text is flagged for `violence` when it contains "kill" or
 * "attack", and for `harassment` when it contains "idiot", so that a demo can show both answers;
 * every score is drawn from the text and kept below 0.5 unless its category is flagged.
 */
import type { SimulatedProviderConfig } from '../../config/schema.js';
import { MODERATION_CATEGORIES, type ModerationPart } from '../../protocol/moderations.js';
import type { ModerationsCall, ModerationsResult } from '../provider.js';
import { createRandom, deterministicId, hashString } from './deterministic-random.js';
import { startWholeCall } from './whole-call.js';

const TRIGGERS: ReadonlyArray<[RegExp, (typeof MODERATION_CATEGORIES)[number]]> = [
  [/\b(kill|attack)\b/i, 'violence'],
  [/\bidiot\b/i, 'harassment'],
];

/** Categories that apply to images as well as text (the others apply to text only). */
const IMAGE_CATEGORIES = new Set(['self-harm', 'self-harm/intent', 'self-harm/instructions', 'sexual', 'violence', 'violence/graphic']);

function resultFor(text: string, withImage: boolean): Record<string, unknown> {
  const random = createRandom(hashString(text));
  const flaggedCategories = new Set(TRIGGERS.filter(([pattern]) => pattern.test(text)).map(([, category]) => category));
  const categories: Record<string, boolean> = {};
  const scores: Record<string, number> = {};
  const applied: Record<string, string[]> = {};
  for (const category of MODERATION_CATEGORIES) {
    const flagged = flaggedCategories.has(category);
    categories[category] = flagged;
    scores[category] = flagged ? 0.9 + random() * 0.09 : random() * 0.01;
    applied[category] = withImage && IMAGE_CATEGORIES.has(category) ? ['text', 'image'] : ['text'];
  }
  return { flagged: flaggedCategories.size > 0, categories, category_scores: scores, category_applied_input_types: applied };
}

function isPart(item: string | ModerationPart): item is ModerationPart {
  return typeof item !== 'string';
}

export async function simulateModerations(config: SimulatedProviderConfig, call: ModerationsCall): Promise<ModerationsResult> {
  await startWholeCall(config, call.signal);
  const { input } = call.request;
  const parts = input.filter(isPart);
  const results =
    parts.length > 0
      ? [resultFor(parts.map((part) => (part.type === 'text' ? part.text : '')).join(' '), parts.some((part) => part.type === 'image_url'))]
      : (input as readonly string[]).map((text) => resultFor(text, false));
  return { body: { id: `modr-${deterministicId(JSON.stringify(input), 32)}`, results } };
}
