/**
 * The server-sent events of a whole-answer endpoint that streams (images with `stream: true`:
 * partial images then the image; transcriptions: text deltas then the whole text), relayed frame
 * by frame through the one SSE writer (sse-writer.ts). The last frame carries the upstream's
 * report (usage, the units it billed): the bill is settled on it before that frame goes out, as
 * on every other stream. A stream that breaks off ends with an `error` event in OpenAI's shape;
 * a client that leaves stops the upstream, and the bill is what the request measured.
 */
import type { FastifyReply } from 'fastify';
import type { UsageMeter } from '../../billing/usage-meter.js';
import { errorBody } from '../../errors/error-shapes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { PricedUnits, Usage } from '../../protocol/canonical.js';
import type { EventFrame } from '../../providers/provider.js';
import type { AnswerLifecycle } from './answer-lifecycle.js';
import { openEventStream } from './sse-writer.js';

/** One event of the stream; the last one (`report` set) ends it (providers/provider.ts). */
export type WholeFrame = EventFrame;

const BROKE_OFF = 'The upstream provider failed mid-stream.';

export async function sendWholeStream(frames: AsyncIterable<WholeFrame>, meter: UsageMeter, lifecycle: AnswerLifecycle, reply: FastifyReply): Promise<void> {
  const writer = openEventStream(reply, () => lifecycle.firstByte());
  const streamClosed = lifecycle.streamOpened();
  let last: WholeFrame | undefined;
  let failed = false;
  try {
    for await (const frame of frames) {
      if (frame.report !== undefined) {
        last = frame;
        break;
      }
      writer.write(encode(frame));
      await writer.ready();
      if (lifecycle.aborted) break;
    }
  } catch {
    failed = true;
  }
  try {
    if (lifecycle.aborted) {
      writer.end();
      return;
    }
    if (last?.report !== undefined) observeReport(meter, last.report);
    else failed = true;
    const error = new GatewayError('upstream_error', { message: BROKE_OFF });
    if (failed) lifecycle.failed(error.errorCode);
    const ending = failed || last === undefined ? `event: error\ndata: ${JSON.stringify(errorBody(error, 'openai'))}\n\n` : encode(last);
    await lifecycle.conclude(
      () => undefined,
      () => writer.end(ending),
    );
  } finally {
    streamClosed();
  }
}

function encode(frame: WholeFrame): string {
  return `${frame.event === undefined ? '' : `event: ${frame.event}\n`}data: ${JSON.stringify(frame.data)}\n\n`;
}

/** What the upstream reported, for the meter: a whole usage, or its input tokens; the units it billed. */
export function observeReport(meter: UsageMeter, report: { reportedInputTokens?: number; reportedUsage?: Usage; units?: PricedUnits }): void {
  if (report.reportedUsage !== undefined) meter.observe({ type: 'usage', usage: report.reportedUsage });
  else if (report.reportedInputTokens !== undefined) {
    meter.observe({ type: 'usage', usage: { inputTokens: report.reportedInputTokens, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 } });
  }
  if (report.units !== undefined) meter.billUnits(report.units);
}
