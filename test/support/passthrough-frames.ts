/**
 * Pass-through frames for tests: every frame a stream hands its sink, collected until the body is
 * over, and a stream made of given frames (a provider double's answer).
 */
import type { FrameSink, PassthroughFrame, PassthroughFrames } from '../../src/providers/provider.js';

/** Runs the frames to the end of their body and returns every frame handed over. */
export function collectFrames(frames: PassthroughFrames): Promise<PassthroughFrame[]> {
  return new Promise((resolve) => {
    const collected: PassthroughFrame[] = [];
    frames.start({ frame: (frame) => void collected.push(frame), closed: () => resolve(collected) });
  });
}

/** Frames that hand over `list` once started, then close; `onRelease` is told when they are released. */
export function framesOf(list: readonly PassthroughFrame[], onRelease: () => void = () => undefined): PassthroughFrames {
  let sink: FrameSink | undefined;
  let released = false;
  return {
    start(started) {
      sink = started;
      setImmediate(() => {
        for (const frame of list) if (!released) sink?.frame(frame);
        sink?.closed();
      });
    },
    pause: () => undefined,
    resume: () => undefined,
    release() {
      if (!released) onRelease();
      released = true;
    },
  };
}
