/**
 * `/metrics` under `serve --workers N` reports the whole server, not the one worker that took the
 * scrape: that worker asks the primary over the cluster IPC channel, the primary collects every
 * listening worker's registry (as JSON) and sums them with prom-client's aggregation
 * (`AggregatorRegistry.aggregate`: counters, histograms and gauges add up), and the worker answers
 * with the sum. One port, as with a single process.
 *
 * Only workers that listen are asked (a worker still starting has nothing to report and could not
 * answer yet). A worker that does not answer in time fails the scrape (503) rather than leaving its
 * counts out of a sum that would then seem to go down. A worker replaced after a crash starts from
 * zero, which Prometheus reads as a counter reset.
 */
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

/** Worker → primary: a scrape to answer. Primary → worker: the sum. */
const SCRAPE = 'tollgate:metrics-scrape';
const SUM = 'tollgate:metrics-sum';
/** Primary → worker: send your registry. Worker → primary: here it is. */
const COLLECT = 'tollgate:metrics-collect';
const PART = 'tollgate:metrics-part';

interface Message {
  type: string;
  id: number;
}
interface SumMessage extends Message {
  text?: string;
  error?: string;
}
interface PartMessage extends Message {
  metrics?: object[];
  error?: string;
}

interface Collection {
  parts: object[][];
  waiting: Set<number>;
  finish: (error: Error | null) => void;
}

/**
 * Answers the workers' scrapes with the sum of every listening worker's registry. Call once in the
 * primary, before forking the workers.
 */
export function startClusterMetricsPrimary(options: { timeoutMs?: number } = {}): void {
  if (!cluster.isPrimary) throw new Error('startClusterMetricsPrimary must run in the cluster primary');
  const timeoutMs = options.timeoutMs ?? 5_000;
  const listening = new Map<number, Worker>();
  const collections = new Map<number, Collection>();
  let nextId = 0;

  cluster.on('listening', (worker) => listening.set(worker.id, worker));
  cluster.on('exit', (worker) => {
    listening.delete(worker.id);
    // A worker gone mid-collection will not answer: fail now rather than at the timeout.
    for (const collection of collections.values()) if (collection.waiting.has(worker.id)) collection.finish(new Error(`worker ${worker.id} exited during the collection`));
  });
  cluster.on('message', (worker, message: unknown) => {
    if (isMessage<Message>(message, SCRAPE)) {
      const answer = (fields: Omit<SumMessage, 'type' | 'id'>) => {
        if (worker.isConnected()) worker.send({ type: SUM, id: message.id, ...fields } satisfies SumMessage);
      };
      collect().then(
        (text) => answer({ text }),
        (error: unknown) => answer({ error: error instanceof Error ? error.message : String(error) }),
      );
    } else if (isMessage<PartMessage>(message, PART)) {
      const collection = collections.get(message.id);
      if (collection === undefined || !collection.waiting.delete(worker.id)) return;
      if (message.metrics === undefined) return collection.finish(new Error(`worker ${worker.id} could not read its metrics: ${message.error ?? 'no reason given'}`));
      collection.parts.push(message.metrics);
      if (collection.waiting.size === 0) collection.finish(null);
    }
  });

  function collect(): Promise<string> {
    const id = nextId++;
    const workers = [...listening.values()].filter((worker) => worker.isConnected());
    return new Promise<object[][]>((resolve, reject) => {
      const timer = setTimeout(() => collection.finish(new Error(`${collection.waiting.size} worker(s) did not send their metrics within ${timeoutMs} ms`)), timeoutMs);
      const collection: Collection = {
        parts: [],
        waiting: new Set(workers.map((worker) => worker.id)),
        finish: (error) => {
          if (!collections.delete(id)) return;
          clearTimeout(timer);
          if (error === null) resolve(collection.parts);
          else reject(error);
        },
      };
      collections.set(id, collection);
      for (const worker of workers) worker.send({ type: COLLECT, id } satisfies Message);
      if (workers.length === 0) collection.finish(null);
    }).then((parts) => AggregatorRegistry.aggregate(parts).metrics());
  }
}

/**
 * In a worker: sends `registry` to the primary when it collects, and returns what `/metrics`
 * answers there (the primary's sum; rejects when it does not come within `timeoutMs`). Call it
 * before the worker listens.
 */
export function clusterMetricsScraper(registry: Registry, timeoutMs = 10_000): () => Promise<string> {
  const send = process.send?.bind(process);
  if (!cluster.isWorker || send === undefined) throw new Error('clusterMetricsScraper must run in a cluster worker');
  const pending = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  let nextId = 0;
  process.on('message', (message: unknown) => {
    if (isMessage<Message>(message, COLLECT)) {
      registry.getMetricsAsJSON().then(
        (metrics) => send({ type: PART, id: message.id, metrics } satisfies PartMessage),
        (error: unknown) => send({ type: PART, id: message.id, error: error instanceof Error ? error.message : String(error) } satisfies PartMessage),
      );
      return;
    }
    if (!isMessage<SumMessage>(message, SUM)) return;
    const waiting = pending.get(message.id);
    if (waiting === undefined) return;
    pending.delete(message.id);
    clearTimeout(waiting.timer);
    if (typeof message.text === 'string') waiting.resolve(message.text);
    else waiting.reject(new Error(`the cluster primary could not collect the metrics: ${message.error ?? 'no reason given'}`));
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`the cluster primary did not answer the metrics scrape within ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(id, { resolve, reject, timer });
      send({ type: SCRAPE, id } satisfies Message);
    });
}

function isMessage<T extends Message>(message: unknown, type: string): message is T {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type && typeof (message as { id?: unknown }).id === 'number';
}
