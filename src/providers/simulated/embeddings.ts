/**
 * The simulated provider's embeddings: for each input, a unit vector drawn from a generator seeded
 * by the input (the same text always gets the same vector), `dimensions` long (1,536 by default, as
 * `text-embedding-3-small`), and the input tokens counted exactly with o200k_base, as OpenAI reports
 * them. Failure modes as for answers: `before_first_byte` is a 500, `hang` is silence.
 */
import type { SimulatedProviderConfig } from '../../config/schema.js';
import { runYielding } from '../../lib/run-yielding.js';
import { countEmbeddingTokens, embeddingsAnswer, type EmbeddingInput } from '../../protocol/embeddings.js';
import type { EmbeddingsCall, EmbeddingsResult } from '../provider.js';
import { createRandom, hashString } from './deterministic-random.js';
import { startWholeCall } from './whole-call.js';

export const SIMULATED_EMBEDDING_DIMENSIONS = 1_536;

/** The vector of one input: deterministic, of length 1. */
export function simulatedVector(input: EmbeddingInput, dimensions: number): number[] {
  const random = createRandom(hashString(typeof input === 'string' ? input : input.join(',')));
  const values = Array.from({ length: dimensions }, () => random() * 2 - 1);
  const norm = Math.sqrt(values.reduce((sum, value) => sum + value * value, 0)) || 1;
  return values.map((value) => value / norm);
}

export async function simulateEmbeddings(config: SimulatedProviderConfig, call: EmbeddingsCall): Promise<EmbeddingsResult> {
  await startWholeCall(config, call.signal);
  const { inputs, dimensions, encodingFormat } = call.request;
  const vectors = inputs.map((input) => simulatedVector(input, dimensions ?? SIMULATED_EMBEDDING_DIMENSIONS));
  const reportedInputTokens = await runYielding(countEmbeddingTokens(inputs));
  return { body: embeddingsAnswer(vectors, encodingFormat), reportedInputTokens };
}
