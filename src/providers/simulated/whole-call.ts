/**
 * The start of a simulated call answered whole (embeddings, moderations): the failure modes as for
 * streamed answers (`before_first_byte` a 500, `hang` silence until the first-byte timeout or the
 * abort), then one `pace_ms` pause for the work.
 */
import type { SimulatedProviderConfig } from '../../config/schema.js';
import { UpstreamError } from '../provider.js';
import { abortableSleep } from './abortable-sleep.js';

export async function startWholeCall(config: SimulatedProviderConfig, signal: AbortSignal): Promise<void> {
  const failure = config.failure.mode;
  if (failure === 'before_first_byte') throw new UpstreamError('status', 'simulated upstream failure', { status: 500 });
  if (failure === 'hang') {
    const timedOut = await abortableSleep(config.timeouts.first_byte_ms, signal);
    throw new UpstreamError('timeout', timedOut ? `simulated upstream sent no first byte within ${config.timeouts.first_byte_ms} ms` : 'simulated upstream was silent until the call was aborted');
  }
  if (!(await abortableSleep(config.pace_ms, signal))) throw new UpstreamError('connect', 'the call was aborted');
}
