/** Reads samples from Prometheus' text exposition format, for tests of `/metrics`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (match === null) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? '').matchAll(LABEL)) labels[label[1]!] = label[2]!.replace(/\\(.)/g, '$1');
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The samples named `name` whose labels include `labels`. */
export function samplesOf(text: string, name: string, labels: Record<string, string> = {}): Sample[] {
  return parseSamples(text).filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value));
}

/** The sum of the matching samples (0 when there are none). */
export function sampleSum(text: string, name: string, labels: Record<string, string> = {}): number {
  return samplesOf(text, name, labels).reduce((sum, sample) => sum + sample.value, 0);
}
