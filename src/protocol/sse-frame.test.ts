import { describe, expect, it } from 'vitest';
import { sseFrame, sseFrameOfLines } from './sse-frame.js';

describe('sseFrame', () => {
  it('writes the event line when there is one, the data line and a blank line', () => {
    expect(sseFrame(undefined, '{"a":1}')).toBe('data: {"a":1}\n\n');
    expect(sseFrame('response.completed', '{"a":1}')).toBe('event: response.completed\ndata: {"a":1}\n\n');
    expect(sseFrame(undefined, '[DONE]')).toBe('data: [DONE]\n\n');
  });

  it('writes data of several lines as one data line each, one-line data as sseFrame does', () => {
    expect(sseFrameOfLines('message_start', 'one\ntwo')).toBe('event: message_start\ndata: one\ndata: two\n\n');
    expect(sseFrameOfLines(undefined, 'one\n\nthree\n')).toBe('data: one\ndata: \ndata: three\ndata: \n\n');
    expect(sseFrameOfLines('ping', '{}')).toBe(sseFrame('ping', '{}'));
    expect(sseFrameOfLines(undefined, '')).toBe('data: \n\n');
  });
});
