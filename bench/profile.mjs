/**
 * Summarises the `.cpuprofile` files that `node --cpu-prof` wrote: where the process spent its own
 * (self) time, by function and by package or source folder, as Markdown.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const IDLE = new Set(['(idle)', '(program)', '(garbage collector)']);

/** Reads every profile in `folder` and returns the Markdown summary. */
export function summarizeProfiles(folder) {
  const byFunction = new Map();
  const byPlace = new Map();
  const inclusive = new Map();
  let total = 0;
  let idle = 0;
  const files = readdirSync(folder).filter((name) => name.endsWith('.cpuprofile'));
  for (const file of files) {
    const profile = JSON.parse(readFileSync(join(folder, file), 'utf8'));
    const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
    const parents = new Map();
    for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
    const self = new Map();
    // timeDeltas[i] is the time between sample i-1 and sample i: charge it to sample i's frame.
    profile.samples.forEach((id, index) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)));
    // Inclusive time of the gateway's own functions: each sample counts once for every distinct
    // gateway function on its stack. After an `await` a stack restarts at the microtask queue, so
    // this is the synchronous time spent under a function, which is where the CPU goes anyway.
    for (const [id, micros] of self) {
      const seen = new Set();
      for (let current = id; current !== undefined; current = parents.get(current)) {
        const frame = nodes.get(current).callFrame;
        if (!frame.url.includes('/dist/') || frame.url.includes('node_modules')) continue;
        const key = `${frame.functionName || '(anonymous)'} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
        if (seen.has(key)) continue;
        seen.add(key);
        inclusive.set(key, (inclusive.get(key) ?? 0) + micros);
      }
    }
    for (const [id, micros] of self) {
      const frame = nodes.get(id).callFrame;
      const name = frame.functionName || '(anonymous)';
      total += micros;
      if (name === '(idle)') {
        idle += micros;
        continue;
      }
      const place = placeOf(frame.url, name);
      const key = `${name} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
      byFunction.set(key, (byFunction.get(key) ?? 0) + micros);
      byPlace.set(place, (byPlace.get(place) ?? 0) + micros);
    }
  }
  const busy = total - idle;
  const rows = (map, limit) =>
    [...map.entries()]
      .sort((left, right) => right[1] - left[1])
      .slice(0, limit)
      .map(([key, micros]) => `| ${key.replaceAll('|', '\\|')} | ${(micros / 1000).toFixed(0)} | ${((micros / busy) * 100).toFixed(1)}% |`)
      .join('\n');
  return [
    `CPU profile of the gateway (${files.length} process${files.length === 1 ? '' : 'es'}): ${(busy / 1e6).toFixed(1)} s busy of ${(total / 1e6).toFixed(1)} s sampled.`,
    '',
    '#### Self time by package or source folder',
    '',
    '| where | self ms | share of busy |',
    '|---|---:|---:|',
    rows(byPlace, 20),
    '',
    '#### Top functions by self time',
    '',
    '| function | self ms | share of busy |',
    '|---|---:|---:|',
    rows(byFunction, 40),
    '',
    '#### Gateway functions by inclusive (synchronous) time',
    '',
    '| function | total ms | share of busy |',
    '|---|---:|---:|',
    rows(inclusive, 30),
    '',
  ].join('\n');
}

function shortUrl(url) {
  if (url === '') return '(native)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) return url.slice(modules + 'node_modules/'.length);
  const dist = url.lastIndexOf('/dist/');
  if (dist >= 0) return url.slice(dist + 1);
  return url.replace(/^file:\/\//, '');
}

/** The package (node_modules), the gateway's source folder (dist/<folder>), node's internals, or a VM bucket. */
function placeOf(url, name) {
  if (IDLE.has(name)) return name;
  if (url === '') return '(native / VM)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const dist = url.lastIndexOf('/dist/');
  if (dist >= 0) return `tollgate ${url.slice(dist + 1).split('/').slice(0, 2).join('/')}`;
  if (url.startsWith('node:')) return `node ${url.slice(5).split('/')[0]}`;
  return url;
}
