/**
 * `POST /v1/audio/transcriptions` and `POST /v1/audio/translations` (docs/wire-protocols.md §9,
 * §15) as whole answers (whole-answer.ts) of a multipart upload. The file's duration, read from
 * the file when the request is decoded, is held (`audio_second`, by the millisecond); a model
 * priced by tokens also holds the bound of its tokens (below). The bill is what the upstream
 * reports: its tokens (then no duration), or its seconds; the measured duration when it reports
 * nothing (`whisper-1` in `text`, `srt`, `vtt`; the simulated provider). JSON answers are passed
 * on as the upstream wrote them (its `usage` included), text documents as text, streams event by
 * event, the bill settled before `transcript.text.done` goes out.
 */
import { Readable } from 'node:stream';
import type { ModelPrices } from '../../../../billing/prices.js';
import { GatewayError } from '../../../../errors/gateway-error.js';
import { utf8Length } from '../../../../protocol/tokens.js';
import { decodeTranscriptionRequest, transcriptionReport, type AudioTextEndpoint, type TranscriptionRequest } from '../../../../protocol/transcriptions.js';
import type { TranscriptionEvent } from '../../../../providers/provider.js';
import { servesEndpoint } from '../../../../routing/catalog.js';
import type { WholeBody, WholeEndpoint, WholeResult } from '../../whole-answer.js';
import type { WholeFrame } from '../../whole-stream.js';

/**
 * The most audio tokens a token-billed model (gpt-4o-transcribe style) is assumed to bill per
 * second of audio: OpenAI publishes no fixed rate, so this is the gateway's assumption, meant as a
 * generous ceiling (docs/wire-protocols.md §15.3). Only the hold uses it: the bill is the tokens
 * reported, capped at the hold (the excess recorded).
 */
export const AUDIO_TOKENS_PER_SECOND = 50;

/** Whether the model bills tokens (its `input` or `output` price is not 0): then the hold covers them too. */
function billsTokens(prices: ModelPrices): boolean {
  return prices.inputPerMillion > 0n || prices.outputPerMillion > 0n;
}

function fieldsOf(body: WholeBody): Extract<WholeBody, { kind: 'upload' }>['fields'] {
  if (body.kind !== 'upload') throw new Error('an upload endpoint was given a JSON body');
  return body.fields;
}

async function* framesOf(events: AsyncIterable<TranscriptionEvent>): AsyncGenerator<WholeFrame> {
  for await (const { event, data } of events) {
    const frame = { ...(event === undefined ? {} : { event }), data };
    yield data.type === 'transcript.text.done' ? { ...frame, report: transcriptionReport(data.usage) } : frame;
  }
}

function audioTextEndpoint(surface: AudioTextEndpoint): WholeEndpoint<TranscriptionRequest> {
  return {
    surface,
    upload: surface,
    decode: (body) => decodeTranscriptionRequest(fieldsOf(body), surface),
    countInput: () => 0,
    // A model billed by tokens: the prompt (its bytes bound its tokens) and the audio's tokens.
    inputBound: (request, _model, _imageTokens, prices) =>
      billsTokens(prices) ? utf8Length(request.prompt ?? '') + Math.ceil((request.durationMs / 1000) * AUDIO_TOKENS_PER_SECOND) : 0,
    hold: (request, prices, model) => ({
      units: { audioMilliseconds: request.durationMs },
      ...(billsTokens(prices) ? { maxOutputTokens: model.maxOutputTokens } : {}),
    }),
    serves: (target) => servesEndpoint(target.provider, surface),
    async call(target, request, _body, signal, requestId): Promise<WholeResult> {
      const transcribe = target.provider.transcribe;
      if (transcribe === undefined) throw new GatewayError('model_unavailable');
      const result = await transcribe({ upstreamModel: target.upstreamModel, request, signal, requestId });
      switch (result.kind) {
        case 'json':
          return { body: result.body, ...transcriptionReport(result.body.usage) };
        case 'text':
          return { body: {}, binary: { contentType: result.contentType, stream: Readable.from([Buffer.from(result.text, 'utf8')], { objectMode: false }) } };
        case 'events':
          return { body: {}, events: framesOf(result.events) };
      }
    },
    answer: (result) => result.body,
  };
}

export const transcriptionsEndpoint = audioTextEndpoint('transcriptions');
export const translationsEndpoint = audioTextEndpoint('translations');
