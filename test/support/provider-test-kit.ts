/**
 * What every provider test does around the provider under test: start upstream doubles and close
 * them (and the providers) after each test, drain a provider's stream, catch the `UpstreamError` a
 * call fails with, and check that a text gives away neither the upstream's address nor its key.
 * Test-only code.
 */
import { afterEach, expect } from 'vitest';
import type { CanonicalEvent } from '../../src/protocol/canonical.js';
import { UpstreamError, type Provider } from '../../src/providers/provider.js';
import { startUpstreamDouble, type Answer, type UpstreamDouble } from './upstream-double.js';

export interface ProviderTestKit {
  /** A fresh upstream double answering with `answer`, closed after the test. */
  upstream(answer: Answer): Promise<UpstreamDouble>;
  /** Closes `provider` (its connection pool) after the test; returns it. */
  track<P extends Provider>(provider: P): P;
  /** Runs `cleanup` after the test. */
  defer(cleanup: () => Promise<void>): void;
}

/** Registers an `afterEach` that closes what the test opened, last opened first. Call at module level. */
export function providerTestKit(): ProviderTestKit {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return {
    async upstream(answer) {
      const double = await startUpstreamDouble(answer);
      cleanups.push(() => double.close());
      return double;
    },
    track(provider) {
      cleanups.push(async () => {
        await provider.close?.();
      });
      return provider;
    },
    defer(cleanup) {
      cleanups.push(cleanup);
    },
  };
}

/** Every event of a stream, in order. */
export async function collect(events: AsyncIterable<CanonicalEvent>): Promise<CanonicalEvent[]> {
  const collected: CanonicalEvent[] = [];
  for await (const event of events) collected.push(event);
  return collected;
}

/** The `UpstreamError` `promise` rejects with; fails the test when it resolves or rejects otherwise. */
export async function upstreamFailure(promise: Promise<unknown>): Promise<UpstreamError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(UpstreamError);
  return error as UpstreamError;
}

/** Asserts that `text` contains none of `secrets` (keys, base addresses) nor the loopback address. */
export function expectNoSecrets(text: string | undefined, secrets: readonly string[]): void {
  for (const secret of [...secrets, '127.0.0.1']) expect(text ?? '').not.toContain(secret);
}
