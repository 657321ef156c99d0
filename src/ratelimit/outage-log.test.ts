import { describe, expect, it } from 'vitest';
import { createOutageLog, OUTAGE_MESSAGES } from './outage-log.js';

function recordingLogger() {
  const lines: Array<{ level: 'warn' | 'info'; object: Record<string, unknown>; message: string }> = [];
  return {
    lines,
    warn: (object: object, message: string) => lines.push({ level: 'warn', object: object as Record<string, unknown>, message }),
    info: (object: object, message: string) => lines.push({ level: 'info', object: object as Record<string, unknown>, message }),
  };
}

describe('outage log', () => {
  it('logs the first failure, then at most once per interval with a count, then the recovery', () => {
    let clock = 1_000_000;
    const logger = recordingLogger();
    const log = createOutageLog({ logger, meanwhile: 'limits are counted per instance', intervalMs: 60_000, now: () => clock });
    log.recovered();
    expect(logger.lines).toEqual([]);

    log.failed(new Error('connect ECONNREFUSED 127.0.0.1:1'));
    for (let second = 1; second < 60; second++) {
      clock += 1_000;
      log.failed(new Error('connect ECONNREFUSED 127.0.0.1:1'));
    }
    expect(logger.lines).toEqual([
      { level: 'warn', object: { reason: 'connect ECONNREFUSED 127.0.0.1:1' }, message: `${OUTAGE_MESSAGES.started}; limits are counted per instance until it is back` },
    ]);
    clock += 1_000;
    log.failed('timed out');
    clock += 1_000;
    log.failed('timed out');
    expect(logger.lines).toHaveLength(2);
    expect(logger.lines[1]).toEqual({ level: 'warn', object: { reason: 'timed out', decisions: 60, outageSeconds: 60 }, message: OUTAGE_MESSAGES.ongoing });

    clock += 5_000;
    log.recovered();
    log.recovered();
    expect(logger.lines).toHaveLength(3);
    expect(logger.lines[2]).toEqual({ level: 'info', object: { decisions: 62, outageSeconds: 66 }, message: OUTAGE_MESSAGES.ended });

    // A new outage starts over with its own first line.
    log.failed(new Error('again'));
    expect(logger.lines).toHaveLength(4);
    expect(logger.lines[3]?.message).toMatch(new RegExp(`^${OUTAGE_MESSAGES.started}`));
  });

  it('never puts a stack trace in its lines', () => {
    const logger = recordingLogger();
    createOutageLog({ logger, meanwhile: 'x' }).failed(new Error('boom'));
    expect(JSON.stringify(logger.lines)).not.toMatch(/stack|at .*\.ts/);
  });
});
