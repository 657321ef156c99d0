/**
 * Pass-through or canonical: the router passes the client's body through when the target speaks
 * the client's surface natively and the request is not canonical-only, and goes canonical
 * otherwise. A pass-through answered in the other form than asked fails over.
 */
import { describe, expect, it } from 'vitest';
import { collectFrames } from '../../test/support/passthrough-frames.js';
import { BODY, ControlledProvider, model, release, restOf, route, simulated, target, unavailable } from '../../test/support/routing.js';
import { Router } from './router.js';

describe('pass-through or canonical', () => {
  it('passes the body through when the target speaks the surface natively', async () => {
    const native = new ControlledProvider('native', ['chat-completions']);
    const entry = model([target(native, { model: 'native-model' })]);
    const opened = await new Router().open(route(entry, { clientWantsUsage: true, upstreamHeaders: { 'x-extra': 'kept' } }));
    expect(opened.kind).toBe('passthrough');
    if (opened.kind !== 'passthrough') return;
    expect(opened.result.kind).toBe('stream');
    if (opened.result.kind !== 'stream') return;
    const frames = (await collectFrames(opened.result.frames)).map((frame) => frame.sse);
    expect(frames).toEqual([`data: ${JSON.stringify({ ...BODY, answered_by: 'native' })}\n\n`]);
    expect(native.streamCalls).toBe(0);
    expect(native.passthroughCalls).toHaveLength(1);
    expect(native.passthroughCalls[0]).toMatchObject({
      surface: 'chat-completions',
      body: BODY,
      stream: true,
      clientWantsUsage: true,
      upstreamModel: 'native-model',
      maxOutputTokens: 256,
      requestId: 'req_router_test',
      headers: { 'x-extra': 'kept' },
    });
  });

  it('answers a pass-through not streamed with the JSON body', async () => {
    const native = new ControlledProvider('native', ['chat-completions']);
    const whole = route(model([target(native)]));
    const opened = await new Router().open({ ...whole, request: { ...whole.request, stream: false } });
    expect(opened).toMatchObject({ kind: 'passthrough', result: { kind: 'json', body: { ...BODY, answered_by: 'native' } } });
    expect(native.passthroughCalls[0]?.stream).toBe(false);
  });

  it.each([true, false])('fails over from a pass-through answered in the wrong form (stream %s)', async (stream) => {
    const native = new ControlledProvider('native', ['chat-completions']);
    native.wrongForm = true;
    const failures: string[] = [];
    const router = new Router({ onTargetFailure: (_target, error) => failures.push(`${error.kind}: ${error.message}`) });
    const entry = model([target(native, { priority: 0 }), target(simulated('backup'), { priority: 1 })]);
    const base = route(entry);
    const opened = await router.open({ ...base, request: { ...base.request, stream } });
    expect(opened.target.label).toBe('backup/upstream-model');
    expect(opened.kind).toBe('events');
    await release(opened);
    // A stream it will not use is released, so the upstream's body does not stay open.
    expect(native.streamReleased).toBe(!stream);
    expect(failures).toEqual([`protocol: native/upstream-model answered a ${stream ? 'stream' : 'non-stream'} request with ${stream ? 'a JSON body' : 'a stream'}`]);
  });

  it('goes canonical when the request is canonical-only, even on a native target', async () => {
    const native = new ControlledProvider('native', ['chat-completions']);
    const opened = await new Router().open(route(model([target(native)]), { canonicalOnly: true }));
    expect(opened.kind).toBe('events');
    if (opened.kind === 'events') expect(opened.first).toEqual({ type: 'response-start', upstreamModel: 'upstream-model' });
    await release(opened);
    expect(native.passthroughCalls).toHaveLength(0);
    expect(native.streamCalls).toBe(1);
  });

  it('goes canonical when the target does not speak the client surface', async () => {
    const native = new ControlledProvider('native', ['chat-completions']);
    const opened = await new Router().open(route(model([target(native)]), { surface: 'responses' }));
    expect(opened.kind).toBe('events');
    await release(opened);
    expect(native.passthroughCalls).toHaveLength(0);
  });

  it('goes canonical on a provider without a pass-through path', async () => {
    const opened = await new Router().open(route(model([target(simulated('simulated'))])));
    expect(opened.kind).toBe('events');
    if (opened.kind === 'events') {
      const rest = await restOf(opened);
      expect(rest.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
    }
  });

  it('fails a pass-through over to the next target, which may answer canonically', async () => {
    const native = new ControlledProvider('native', ['chat-completions']);
    native.failure = unavailable();
    const entry = model([target(native, { priority: 0 }), target(simulated('backup'), { priority: 1 })]);
    const opened = await new Router().open(route(entry));
    expect(opened.kind).toBe('events');
    expect(opened.target.label).toBe('backup/upstream-model');
    expect(native.passthroughCalls).toHaveLength(1);
    await release(opened);
  });
});
