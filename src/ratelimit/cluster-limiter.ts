/**
 * Limits shared by the worker processes of one `serve --workers N` without Redis: the primary
 * keeps every window in memory (`MemoryWindows`) and each worker leases points of them over the
 * cluster IPC channel (`createLeaseLimiter`), so the N workers together admit the configured limit
 * once, with a message to the primary only when a lease runs out rather than per request.
 * Separate machines or separate `serve` commands still need Redis.
 */
import cluster, { type Worker } from 'node:cluster';
import { withFailurePolicy, type FailurePolicyOptions } from './failure-policy.js';
import { createLeaseLimiter, grantFrom, type Limiter, type TakeRequest, type WindowAnswer, type WindowStore } from './limiter.js';

export interface ClusterWorkerLimiterOptions extends Partial<FailurePolicyOptions> {
  /** How long to wait for the primary's answer before applying the failure policy (default 1 s). */
  timeoutMs?: number;
}

const CHANNEL = 'tollgate:windows';

/** How often windows that have ended are forgotten. */
const FORGET_MS = 10_000;

interface Window {
  used: number;
  endsAt: number;
  id: string;
}

/** Fixed windows in this process's memory, each taken from atomically (it is one event loop). */
export class MemoryWindows implements WindowStore {
  private readonly windows = new Map<string, Window>();
  private made = 0;
  private readonly forgetter = setInterval(() => this.forget(), FORGET_MS).unref();

  takeNow(key: string, request: TakeRequest): WindowAnswer {
    const now = Date.now();
    let window = this.windows.get(key);
    if (window === undefined || window.endsAt <= now) {
      this.made += 1;
      window = { used: 0, endsAt: now + request.windowMs, id: String(this.made) };
      this.windows.set(key, window);
    }
    const left = Math.max(0, request.limit - window.used);
    const granted = grantFrom(left, request);
    window.used += granted;
    return { granted, left: left - granted, resetMs: window.endsAt - now, window: window.id };
  }

  giveNow(key: string, points: number, id: string): void {
    const window = this.windows.get(key);
    if (window !== undefined && window.id === id && window.endsAt > Date.now()) window.used = Math.max(0, window.used - points);
  }

  take(key: string, request: TakeRequest): Promise<WindowAnswer> {
    return Promise.resolve(this.takeNow(key, request));
  }

  give(key: string, points: number, window: string): Promise<void> {
    this.giveNow(key, points, window);
    return Promise.resolve();
  }

  close(): Promise<void> {
    clearInterval(this.forgetter);
    return Promise.resolve();
  }

  private forget(): void {
    const now = Date.now();
    for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key);
  }
}

type TakeMessage = { channel: typeof CHANNEL; op: 'take'; id: number; key: string; request: TakeRequest };
type GiveMessage = { channel: typeof CHANNEL; op: 'give'; key: string; points: number; window: string };
type AnswerMessage = { channel: typeof CHANNEL; id: number; answer: WindowAnswer };

let primaryWindows: MemoryWindows | undefined;

/** Ids of this worker's takes, unique in the process (every store here hears every answer). */
let lastTakeId = 0;

/**
 * Answers the workers' leases. Call once in the primary, before forking the workers (a message
 * that finds no listener is lost, and its request waits for the timeout).
 */
export function startClusterLimiterPrimary(): void {
  if (!cluster.isPrimary) throw new Error('startClusterLimiterPrimary must run in the cluster primary');
  // Calling this twice keeps one listener and one set of windows.
  if (primaryWindows !== undefined) return;
  const windows = (primaryWindows = new MemoryWindows());
  cluster.on('message', (worker: Worker, message: unknown) => {
    if (isTake(message)) {
      const reply: AnswerMessage = { channel: CHANNEL, id: message.id, answer: windows.takeNow(message.key, message.request) };
      // A worker that died meanwhile needs no answer.
      worker.send(reply, () => undefined);
    } else if (isGive(message)) windows.giveNow(message.key, message.points, message.window);
  });
}

/** A limiter in a cluster worker, leasing from the primary's windows (see startClusterLimiterPrimary). */
export function createClusterWorkerLimiter(options: ClusterWorkerLimiterOptions = {}): Limiter {
  if (!cluster.isWorker || process.send === undefined) {
    throw new Error('createClusterWorkerLimiter must run in a cluster worker; a single process uses the memory limiter');
  }
  const limiter = createLeaseLimiter(new PrimaryWindows(options.timeoutMs ?? 1_000));
  return withFailurePolicy(limiter, {
    onFailure: options.onFailure ?? 'open',
    onBackendError: options.onBackendError,
    onBackendRecovered: options.onBackendRecovered,
  });
}

/** The primary's windows as a worker reaches them: one message per take, answered or timed out. */
class PrimaryWindows implements WindowStore {
  private readonly pending = new Map<number, { resolve(answer: WindowAnswer): void; timer: NodeJS.Timeout }>();
  private readonly onMessage = (message: unknown): void => {
    if (!isAnswer(message)) return;
    const waiting = this.pending.get(message.id);
    if (waiting === undefined) return;
    this.pending.delete(message.id);
    clearTimeout(waiting.timer);
    waiting.resolve(message.answer);
  };

  constructor(private readonly timeoutMs: number) {
    process.on('message', this.onMessage);
  }

  take(key: string, request: TakeRequest): Promise<WindowAnswer> {
    return new Promise((resolve, reject) => {
      lastTakeId += 1;
      const id = lastTakeId;
      const fail = (error: Error) => {
        if (!this.pending.delete(id)) return;
        clearTimeout(timer);
        reject(error);
      };
      const timer = setTimeout(() => fail(new Error(`the cluster primary did not answer a rate-limit lease within ${this.timeoutMs} ms`)), this.timeoutMs);
      this.pending.set(id, { resolve, timer });
      const message: TakeMessage = { channel: CHANNEL, op: 'take', id, key, request };
      process.send!(message, undefined, {}, (error: Error | null) => {
        if (error) fail(error);
      });
    });
  }

  give(key: string, points: number, window: string): Promise<void> {
    const message: GiveMessage = { channel: CHANNEL, op: 'give', key, points, window };
    // Resolved once written (or not: a primary that is gone has no windows left to give to).
    return new Promise((resolve) => process.send!(message, undefined, {}, () => resolve()));
  }

  close(): Promise<void> {
    process.off('message', this.onMessage);
    return Promise.resolve();
  }
}

function isMessage(message: unknown): message is Record<string, unknown> {
  return typeof message === 'object' && message !== null && (message as { channel?: unknown }).channel === CHANNEL;
}

function isTake(message: unknown): message is TakeMessage {
  if (!isMessage(message) || message.op !== 'take' || typeof message.id !== 'number' || typeof message.key !== 'string') return false;
  const request = message.request as Partial<Record<keyof TakeRequest, unknown>> | null;
  return typeof request === 'object' && request !== null && ['least', 'need', 'spare', 'limit', 'windowMs'].every((field) => Number.isFinite(request[field as keyof TakeRequest]));
}

function isGive(message: unknown): message is GiveMessage {
  return isMessage(message) && message.op === 'give' && typeof message.key === 'string' && Number.isFinite(message.points) && typeof message.window === 'string';
}

function isAnswer(message: unknown): message is AnswerMessage {
  return isMessage(message) && typeof message.id === 'number' && typeof message.answer === 'object' && message.answer !== null;
}
