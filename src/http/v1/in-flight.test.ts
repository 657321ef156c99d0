import { describe, expect, it } from 'vitest';
import { InFlight } from './in-flight.js';

describe('InFlight', () => {
  it('drains once every begun answer has ended, each end counted once', async () => {
    const inFlight = new InFlight();
    await inFlight.drained();
    const first = inFlight.begin();
    const second = inFlight.begin();
    let drained = false;
    const waiting = inFlight.drained().then(() => (drained = true));
    first();
    first();
    await Promise.resolve();
    expect(drained).toBe(false);
    expect(inFlight.size).toBe(1);
    second();
    await waiting;
    expect(drained).toBe(true);
  });
});
