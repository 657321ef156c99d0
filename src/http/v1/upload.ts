/**
 * Multipart uploads (`/v1/images/edits`, `/v1/audio/transcriptions`, `/v1/audio/translations`;
 * docs/wire-protocols.md §14): read after the key and rate-limit checks, as every body is, by
 * @fastify/multipart (busboy) as the bytes arrive. Each file is kept once, as the chunks it came
 * in (never joined into a second copy), and forwarded from them; the whole body is bounded by the
 * endpoint's `limits.max_upload_bytes`, a 413 as soon as it passes it (the rest is read and
 * discarded by the lingering close, http/lingering-close.ts).
 */
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '../../errors/gateway-error.js';
import { InvalidRequestError } from '../../protocol/canonical.js';
import type { UploadFields, UploadValue } from '../../protocol/upload-fields.js';

export { fileList, isUploadedFile, textField, textList, type UploadedFile, type UploadFields, type UploadValue } from '../../protocol/upload-fields.js';

/** At most this many parts (fields and files): OpenAI's own endpoints take far fewer. */
const MAX_PARTS = 1_000;

/**
 * Lets the routes registered on `scope` read multipart bodies (`readUpload`); JSON and every other
 * content type are still read as text by the app's one parser, for the handler to refuse.
 */
export async function acceptUploads(scope: FastifyInstance): Promise<void> {
  await scope.register(multipart, { throwFileSizeLimit: true });
}

/**
 * The fields and files of a multipart request body of at most `maxBytes` (files and field values
 * together); the spec's 413 past it, and a 400 for a body that is not multipart or is malformed.
 */
export async function readUpload(request: FastifyRequest, maxBytes: number): Promise<UploadFields> {
  if (!request.isMultipart()) {
    const contentType = request.headers['content-type'] ?? '';
    throw new InvalidRequestError(`Invalid Content-Type header (${contentType}), expected multipart/form-data.`, null, 'invalid_content_type');
  }
  const fields = new Map<string, UploadValue[]>();
  const add = (name: string, value: UploadValue): void => {
    const values = fields.get(name);
    if (values === undefined) fields.set(name, [value]);
    else values.push(value);
  };
  let total = 0;
  const tooLarge = (): GatewayError => new GatewayError('body_too_large');
  try {
    const parts = request.parts({ limits: { fileSize: maxBytes, fieldSize: maxBytes, parts: MAX_PARTS } });
    for await (const part of parts) {
      if (part.type === 'field') {
        if (part.valueTruncated || part.fieldnameTruncated) throw tooLarge();
        const value = typeof part.value === 'string' ? part.value : String(part.value);
        total += Buffer.byteLength(value) + Buffer.byteLength(part.fieldname);
        if (total > maxBytes) throw tooLarge();
        add(part.fieldname, value);
        continue;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of part.file as AsyncIterable<Buffer>) {
        size += chunk.length;
        total += chunk.length;
        if (total > maxBytes) throw tooLarge();
        chunks.push(chunk);
      }
      if (part.file.truncated) throw tooLarge();
      add(part.fieldname, { kind: 'file', filename: part.filename, contentType: part.mimetype || 'application/octet-stream', chunks, size });
    }
  } catch (error) {
    // The parser stops here, maybe mid-file (a file it holds unread would keep the body paused):
    // the rest of the body goes to nobody, for the lingering close to read and discard
    // (http/lingering-close.ts) instead of waiting out its bound.
    request.raw.unpipe();
    throw asUploadError(error);
  }
  return fields;
}

/** The client-facing error for what reading the upload threw: its own, the 413, or a 400 for a malformed body. */
function asUploadError(error: unknown): unknown {
  if (error instanceof GatewayError || error instanceof InvalidRequestError) return error;
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  if (code === 'FST_REQ_FILE_TOO_LARGE' || code === 'FST_PARTS_LIMIT' || code === 'FST_FILES_LIMIT' || code === 'FST_FIELDS_LIMIT') {
    return new GatewayError('body_too_large');
  }
  // busboy's own complaints (a missing boundary, a body cut short): the client's malformed body.
  return new InvalidRequestError('Invalid multipart/form-data body.', null, 'invalid_multipart');
}
