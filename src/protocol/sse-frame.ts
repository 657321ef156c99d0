/**
 * The one framing of server-sent-events text, for every surface's encoder, the failure frames, a
 * pass-through's re-written upstream events and the decoder's re-written text: `event:` when there
 * is one, the data, a blank line.
 */

/**
 * One frame whose data is one line: JSON (which never holds a raw line break) or `[DONE]`. One
 * concatenation, no scan of the data: the encoders call it for every frame of a stream.
 */
export function sseFrame(event: string | undefined, data: string): string {
  return event === undefined ? `data: ${data}\n\n` : `event: ${event}\ndata: ${data}\n\n`;
}

/**
 * One frame whose data may hold line breaks (an upstream's event, written anew): each line goes
 * out as its own `data:` line. The usual event is one line and costs one scan more than `sseFrame`.
 */
export function sseFrameOfLines(event: string | undefined, data: string): string {
  return sseFrame(event, data.includes('\n') ? data.split('\n').join('\ndata: ') : data);
}
