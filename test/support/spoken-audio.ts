/**
 * Real spoken audio for the transcription tests: a WAV that Debian's `espeak-ng` says (`apt-get
 * install espeak-ng`; .ci/run installs it), made once per test file in a temp folder, and a large
 * WAV of silence (a header, then zeros) for the upload tests. Without espeak-ng the suites that
 * need speech skip with a message, except under CI=true, where they must run. No MP3 encoder is
 * installed with the tests' tools, so the audio is WAV only.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { parseStream } from 'music-metadata';
import { secondsToMilliseconds } from '../../src/protocol/transcriptions.js';
import { wavHeader } from '../../src/providers/simulated/speech.js';

export const ESPEAK = process.env.TOLLGATE_TEST_ESPEAK ?? 'espeak-ng';

/** Why speech cannot be made here, or null when it can. Throws under CI, where it must. */
export function espeakMissing(): string | null {
  const probe = spawnSync(ESPEAK, ['--version'], { encoding: 'utf8' });
  if (probe.status === 0) return null;
  const reason = `Transcription tests skipped: ${ESPEAK} is not installed (apt-get install espeak-ng, or set TOLLGATE_TEST_ESPEAK).`;
  if (process.env.CI === 'true') throw new Error(`${reason} Under CI they must run.`);
  console.warn(reason);
  return reason;
}

export interface AudioFolder {
  path: string;
  /** Says `text` into `<name>.wav` in the folder; returns its path. */
  speak(name: string, text: string): string;
  /** Writes `bytes` into `name` in the folder; returns its path. */
  write(name: string, bytes: Buffer | string): string;
  remove(): void;
}

export function audioFolder(): AudioFolder {
  const path = mkdtempSync(join(tmpdir(), 'tollgate-audio-'));
  return {
    path,
    speak(name, text) {
      const file = join(path, `${name}.wav`);
      const run = spawnSync(ESPEAK, ['-w', file, text], { encoding: 'utf8' });
      if (run.status !== 0) throw new Error(`${ESPEAK} failed: ${run.stderr}`);
      return file;
    },
    write(name, bytes) {
      const file = join(path, name);
      writeFileSync(file, bytes);
      return file;
    },
    remove: () => rmSync(path, { recursive: true, force: true }),
  };
}

/** A valid WAV of silence of exactly `totalBytes` bytes (header included). */
export function silentWav(totalBytes: number, sampleRate = 16_000): Buffer {
  const dataBytes = (totalBytes - 44) & ~1;
  const wav = Buffer.alloc(44 + dataBytes);
  wavHeader(dataBytes, sampleRate).copy(wav, 0);
  return wav;
}

/** The duration the gateway bills for a file, computed as it does (music-metadata, rounded up to the millisecond). */
export async function measuredMilliseconds(file: string | Buffer, mimeType = 'audio/wav'): Promise<number> {
  const bytes = typeof file === 'string' ? readFileSync(file) : file;
  const metadata = await parseStream(Readable.from([bytes], { objectMode: false }), { mimeType, size: bytes.length }, { duration: true, skipCovers: true });
  const seconds = metadata.format.duration;
  if (seconds === undefined) throw new Error('no duration');
  return secondsToMilliseconds(seconds);
}
