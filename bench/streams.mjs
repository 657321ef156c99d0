/**
 * Holds many slow streams open at once, run as a child process (spawned by run.mjs). It opens
 * `count` streaming requests with at most `batch` still waiting for their first chunk (so the
 * listen backlog is never flooded), keeps reading every stream, reports `opened` once each has
 * delivered its first chunk (or the time is up), and closes them all when told to.
 *
 * Message in:  { origin, path, headers, body, count, batch, openTimeoutMs }, later 'close'
 * Message out: { type: 'opened', opened, failed, errorSamples, seconds, progress }, later { type: 'closed' }
 * `progress[i]` is when (seconds) the (i+1)th tenth of the streams had opened: a ramp that slows
 * down as more streams are open shows a per-stream cost that grows with their number.
 */
import { Pool } from 'undici';

process.on('disconnect', () => process.exit(1));
process.once('message', (job) => {
  holdStreams(job).catch((error) => {
    process.send({ type: 'failed', error: String(error?.stack ?? error) }, () => process.exit(1));
  });
});

async function holdStreams(job) {
  const pool = new Pool(job.origin, { connections: job.count, pipelining: 1, headersTimeout: 60_000, bodyTimeout: 0, connect: { timeout: 30_000 } });
  const bodies = [];
  const errorSamples = [];
  let opened = 0;
  let failed = 0;
  const progress = [];
  const started = process.hrtime.bigint();

  const openOne = async () => {
    try {
      const response = await pool.request({ path: job.path, method: 'POST', headers: { 'content-type': 'application/json', ...job.headers }, body: job.body });
      if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode}: ${(await response.body.text()).slice(0, 200)}`);
      bodies.push(response.body);
      response.body.on('error', () => {});
      await new Promise((resolve, reject) => {
        response.body.once('end', () => reject(new Error('stream ended before it was counted')));
        response.body.on('data', resolve);
      });
      opened += 1;
      if (opened % Math.max(1, Math.floor(job.count / 10)) === 0) progress.push(Number((Number(process.hrtime.bigint() - started) / 1e9).toFixed(2)));
    } catch (error) {
      failed += 1;
      if (errorSamples.length < 5) errorSamples.push(String(error?.code ?? error?.message ?? error));
    }
  };

  let next = 0;
  const opener = async () => {
    while (next < job.count) {
      next += 1;
      await openOne();
    }
  };
  const deadline = new Promise((resolve) => setTimeout(resolve, job.openTimeoutMs));
  await Promise.race([Promise.all(Array.from({ length: job.batch }, opener)), deadline]);
  next = job.count;
  process.send({ type: 'opened', opened, failed, errorSamples, progress, seconds: Number(process.hrtime.bigint() - started) / 1e9 });

  process.once('message', async () => {
    for (const body of bodies) body.destroy();
    await pool.destroy().catch(() => {});
    process.send({ type: 'closed' }, () => process.exit(0));
  });
}
