/**
 * A multipart/form-data body for an upstream (an upload forwarded: docs/wire-protocols.md §14),
 * built from the client's fields and the files as they were read (upload.ts keeps each as its
 * chunks): the chunks are sent as they are, between small headers of our own, never joined into
 * another copy. Its length is known, so it goes with a `content-length`.
 */
import { randomBytes } from 'node:crypto';

/** A file to send: its name, type and bytes (as chunks). */
export interface MultipartFile {
  filename: string;
  contentType: string;
  chunks: readonly Buffer[];
}

export type MultipartValue = string | MultipartFile;

export class MultipartBody {
  readonly contentType: string;
  readonly length: number;
  readonly #pieces: Buffer[] = [];

  /** `fields` in order; a name with several values is sent once per value, as the client did. */
  constructor(fields: Iterable<readonly [string, MultipartValue]>) {
    const boundary = `----tollgate${randomBytes(12).toString('hex')}`;
    this.contentType = `multipart/form-data; boundary=${boundary}`;
    for (const [name, value] of fields) {
      if (typeof value === 'string') {
        this.#pieces.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${quoted(name)}"\r\n\r\n${value}\r\n`));
        continue;
      }
      const head = `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(name)}"; filename="${quoted(value.filename)}"\r\nContent-Type: ${value.contentType.replace(/[\r\n]/g, '')}\r\n\r\n`;
      this.#pieces.push(Buffer.from(head), ...value.chunks, Buffer.from('\r\n'));
    }
    this.#pieces.push(Buffer.from(`--${boundary}--\r\n`));
    this.length = this.#pieces.reduce((sum, piece) => sum + piece.length, 0);
  }

  /** The bytes, a piece at a time (what undici sends). */
  *[Symbol.iterator](): Iterator<Buffer> {
    yield* this.#pieces;
  }
}

/** A name or file name inside a quoted header parameter: quotes and line breaks escaped as browsers do. */
function quoted(text: string): string {
  return text.replace(/\r/g, '%0D').replace(/\n/g, '%0A').replace(/"/g, '%22');
}
