/**
 * Provider conformance, the transport: an upstream that never answers, resets, refuses, sends a
 * non-JSON error body, breaks, ends early or stalls mid-stream, and callers that leave. These live
 * here, not in each provider's tests: every provider goes through the one shared client in
 * src/providers/shared/.
 */
import { expect } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CanonicalEvent } from '../../src/protocol/canonical.js';
import { UpstreamError } from '../../src/providers/provider.js';
import { collect, upstreamFailure } from '../support/provider-test-kit.js';
import {
  call,
  type ConformanceCase,
  doubleStillGenerating,
  eventsAfterHead,
  expectClosedEarly,
  expectHead,
  failureOf,
  kit,
  PATIENT_TIMEOUTS,
  providerFor,
  REQUEST,
  runConformance,
  shownTypes,
  SECRET,
  TIMEOUTS,
} from './provider-table.js';

const CASES: ConformanceCase[] = [
  {
    name: 'an upstream that never answers: timeout, another target may succeed',
    waitsOutATimeout: true,
    async run(entry) {
      const error = await failureOf(entry, () => {
        // never answers
      }, { ...TIMEOUTS, first_byte_ms: 150 });
      expect(error.kind).toBe('timeout');
      expect(error.failoverable).toBe(true);
    },
  },
  {
    name: 'a connection reset before any answer: connect, another target may succeed',
    async run(entry) {
      const error = await failureOf(entry, (_request, response) => {
        response.socket?.destroy();
      });
      expect(error.kind).toBe('connect');
      expect(error.failoverable).toBe(true);
    },
  },
  {
    name: 'a refused connection: connect, another target may succeed, the key not in the message',
    async run(entry) {
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      await new Promise<void>((resolve) => server.close(() => resolve()));
      const error = await upstreamFailure(collect(providerFor(entry, `http://127.0.0.1:${port}${entry.versionPath}`).stream(REQUEST, call(entry))));
      expect(error.kind).toBe('connect');
      expect(error.failoverable).toBe(true);
      expect(error.message).not.toContain(SECRET);
    },
  },
  {
    name: 'an error body that is not JSON: the status stays, without a client message',
    async run(entry) {
      const error = await failureOf(entry, (_request, response) => {
        response.writeHead(502, { 'content-type': 'text/html' });
        response.end('<html>Bad gateway</html>');
      });
      expect(error.kind).toBe('status');
      expect(error.status).toBe(502);
      expect(error.failoverable).toBe(true);
      expect(error.clientMessage).toBeUndefined();
    },
  },
  {
    name: 'a caller abort before any answer is rethrown as is, not as an upstream failure',
    async run(entry) {
      const double = await kit.upstream(() => {
        // never answers
      });
      const controller = new AbortController();
      const pending = collect(providerFor(entry, double).stream(REQUEST, call(entry, controller.signal)));
      setTimeout(() => controller.abort(), 50);
      const error = await pending.then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(error).not.toBeInstanceOf(UpstreamError);
      expect(error).toMatchObject({ name: 'AbortError' });
      await double.requests[0]?.connectionClosed;
    },
  },
  {
    name: 'a stream that breaks mid-way: the deltas so far, then exactly one error event, nothing after',
    async run(entry) {
      const events = await eventsAfterHead(entry, (response) => response.destroy());
      expectHead(events, entry);
      expect(events.at(-1)).toEqual({ type: 'error', code: 'upstream_error', message: 'The upstream connection was lost mid-stream.' });
    },
  },
  {
    name: 'a stream whose body ends before the answer is complete: the deltas so far, then an error event',
    async run(entry) {
      const events = await eventsAfterHead(entry, (response) => response.end());
      expectHead(events, entry);
      expect(events.at(-1)).toEqual({ type: 'error', code: 'upstream_error', message: 'The upstream closed the stream before the answer was complete.' });
    },
  },
  {
    name: 'a stream that stalls past the idle timeout: the deltas so far, then an error event',
    waitsOutATimeout: true,
    async run(entry) {
      const events = await eventsAfterHead(entry, () => {
        // stalls after the head
      }, { ...TIMEOUTS, idle_ms: 150 });
      expectHead(events, entry);
      expect(events.at(-1)).toEqual({ type: 'error', code: 'upstream_error', message: 'The upstream stopped sending data (idle timeout).' });
    },
  },
  {
    name: 'a client abort: leaving after the first delta closes the upstream request before its answer is done',
    async run(entry) {
      const double = await doubleStillGenerating(entry);
      const seen: CanonicalEvent[] = [];
      for await (const event of providerFor(entry, double, PATIENT_TIMEOUTS).stream(REQUEST, call(entry))) {
        seen.push(event);
        if (event.type === 'text-delta') break;
      }
      expect(shownTypes(seen)).toEqual(['response-start', 'text-delta']);
      await expectClosedEarly(double);
    },
  },
  {
    name: 'a client abort: leaving right after response-start closes the upstream request too',
    async run(entry) {
      const double = await doubleStillGenerating(entry);
      const iterator = providerFor(entry, double, PATIENT_TIMEOUTS).stream(REQUEST, call(entry))[Symbol.asyncIterator]();
      expect((await iterator.next()).value).toEqual({ type: 'response-start', upstreamModel: entry.upstreamModel });
      await iterator.return?.();
      await expectClosedEarly(double);
    },
  },
  {
    name: 'the call signal aborting mid-stream: an error event last, and the upstream request closed',
    async run(entry) {
      const double = await doubleStillGenerating(entry);
      const controller = new AbortController();
      const events: CanonicalEvent[] = [];
      for await (const event of providerFor(entry, double, PATIENT_TIMEOUTS).stream(REQUEST, call(entry, controller.signal))) {
        events.push(event);
        if (event.type === 'text-delta') controller.abort();
      }
      expect(events.at(-1)).toMatchObject({ type: 'error', code: 'upstream_error' });
      await expectClosedEarly(double);
    },
  },
];

runConformance('provider conformance, transport', CASES);
