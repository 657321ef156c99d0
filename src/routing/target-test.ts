/**
 * An operator's test of one catalog target (docs/architecture.md, "Testing a target"): a minimal
 * request ("Say OK", a few output tokens) sent through exactly that target, on the canonical path,
 * never through the router: no failover, and the target's health is neither read nor changed. The
 * provider's own timeouts (connect, first byte, idle) apply as on any call; nobody is billed.
 */
import type { CanonicalRequest, Usage } from '../protocol/canonical.js';
import { UpstreamError } from '../providers/provider.js';
import type { ModelEntry, Target } from './catalog.js';

/** The most output tokens a test asks for (less when the model allows less). */
export const TEST_MAX_OUTPUT_TOKENS = 16;
/** A test that trickles for longer than this is cut: the target's idle timeout alone would not end it. */
const TEST_DEADLINE_MS = 60_000;

export interface TargetTestResult {
  status: 'ok' | 'failed';
  /** Milliseconds from sending to the answer's end (or the failure). */
  latencyMs: number;
  /** Milliseconds to the first output (text, reasoning or a tool call); null without any. */
  firstTokenMs: number | null;
  /** The upstream's HTTP status when it refused the call; 200 once it accepted it; null without an answer. */
  upstreamStatus: number | null;
  /** Why it failed, as the provider redacted it (no upstream address, no credential). */
  error: { kind: string; message: string } | null;
  /** What the upstream reported, when it did. */
  usage: Usage | null;
  /** The answer's text, cut to 200 characters. */
  text: string;
}

export interface TargetTestOptions {
  requestId: string;
  /** Milliseconds now, from a monotonic clock. */
  clock?: () => number;
  deadlineMs?: number;
}

export async function testTarget(model: ModelEntry, target: Target, options: TargetTestOptions): Promise<TargetTestResult> {
  const clock = options.clock ?? (() => performance.now());
  const maxOutputTokens = Math.min(TEST_MAX_OUTPUT_TOKENS, model.maxOutputTokens);
  const request: CanonicalRequest = {
    model: model.id,
    input: [{ type: 'message', role: 'user', content: [{ type: 'text', text: 'Say OK' }] }],
    tools: [],
    toolChoice: 'auto',
    maxOutputTokens,
    stream: true,
  };
  const deadline = AbortSignal.timeout(options.deadlineMs ?? TEST_DEADLINE_MS);
  const started = clock();
  const elapsed = () => Math.max(1, Math.round(clock() - started));
  let firstTokenMs: number | null = null;
  let upstreamStatus: number | null = null;
  let usage: Usage | null = null;
  let text = '';
  try {
    for await (const event of target.provider.stream(request, { upstreamModel: target.upstreamModel, maxOutputTokens, signal: deadline, requestId: options.requestId })) {
      switch (event.type) {
        case 'response-start':
          upstreamStatus = 200;
          break;
        case 'text-delta':
        case 'reasoning-delta':
        case 'tool-call-start':
          firstTokenMs ??= elapsed();
          if (event.type === 'text-delta' && text.length < 200) text = (text + event.delta).slice(0, 200);
          break;
        case 'usage':
          usage = event.usage;
          break;
        case 'error':
          return { status: 'failed', latencyMs: elapsed(), firstTokenMs, upstreamStatus, error: { kind: event.code, message: event.message }, usage, text };
        default:
          break;
      }
    }
  } catch (error) {
    if (error instanceof UpstreamError) {
      return { status: 'failed', latencyMs: elapsed(), firstTokenMs, upstreamStatus: error.status ?? upstreamStatus, error: { kind: error.kind, message: error.message }, usage, text };
    }
    if (deadline.aborted) {
      return { status: 'failed', latencyMs: elapsed(), firstTokenMs, upstreamStatus, error: { kind: 'timeout', message: `${target.label}: no end of the answer within ${options.deadlineMs ?? TEST_DEADLINE_MS} ms` }, usage, text };
    }
    throw error;
  }
  if (upstreamStatus === null) {
    return { status: 'failed', latencyMs: elapsed(), firstTokenMs, upstreamStatus, error: { kind: 'protocol', message: `${target.label} ended without an answer` }, usage, text };
  }
  return { status: 'ok', latencyMs: elapsed(), firstTokenMs, upstreamStatus, error: null, usage, text };
}
