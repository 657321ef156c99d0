/**
 * The one framing of server-sent-events text, for every surface's encoder, the failure frames and a
 * pass-through's re-written upstream events: `event:` when there is one, the data, a blank line.
 * Data that holds line breaks goes out as several `data:` lines; the usual event (JSON, which never
 * holds a raw line break) is one `data:` line and costs one concatenation.
 */
export function sseFrame(event: string | undefined, data: string): string {
  if (data.includes('\n')) return multiLineFrame(event, data);
  return event === undefined ? `data: ${data}\n\n` : `event: ${event}\ndata: ${data}\n\n`;
}

function multiLineFrame(event: string | undefined, data: string): string {
  const dataLines = data
    .split('\n')
    .map((line) => `data: ${line}\n`)
    .join('');
  return event === undefined ? `${dataLines}\n` : `event: ${event}\n${dataLines}\n`;
}
