/**
 * Turns for long exports (docs/architecture.md, Request log). An export does its work a page at a
 * time, each page in a turn of its own: one page at a time in the process, whatever the number of
 * exports (oldest waiter first), and after each page the next one waits at least as long as that
 * page took. On SQLite a page is a synchronous query on the event loop; this keeps exports to
 * about half of the loop's time at most, so the gateway's other requests keep being answered
 * promptly while exports of any size stream.
 */
const waiting: Array<() => void> = [];
let busy = false;

/** Runs `work` (one page) in its turn, after the pages that asked before and their pauses. */
export async function inExportTurn<T>(work: () => Promise<T>): Promise<T> {
  await turn();
  const started = performance.now();
  try {
    return await work();
  } finally {
    setTimeout(release, Math.ceil(performance.now() - started));
  }
}

function turn(): Promise<void> {
  if (!busy) {
    busy = true;
    return Promise.resolve();
  }
  return new Promise((resolve) => waiting.push(resolve));
}

function release(): void {
  const next = waiting.shift();
  if (next === undefined) busy = false;
  else next();
}
