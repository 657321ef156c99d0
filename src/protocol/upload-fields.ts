/**
 * The fields of a multipart upload as the endpoints read them (docs/wire-protocols.md §14): each
 * name's values in the order sent, a file held once as the chunks it arrived in. Read by
 * http/v1/upload.ts (which fills them) and by the request decoders, with OpenAI's 400s naming the
 * field: a text where a file is due, a file where a text is due, a value sent twice.
 */
import { InvalidRequestError } from './canonical.js';

/** A file of the upload, held as the chunks it arrived in. */
export interface UploadedFile {
  readonly kind: 'file';
  readonly filename: string;
  /** The part's own content type (`application/octet-stream` when the client sent none). */
  readonly contentType: string;
  readonly chunks: readonly Buffer[];
  readonly size: number;
}

/** A field of the upload: its text, or a file; a field name sent more than once keeps every value, in order. */
export type UploadValue = string | UploadedFile;
export type UploadFields = ReadonlyMap<string, readonly UploadValue[]>;

export function isUploadedFile(value: UploadValue | undefined): value is UploadedFile {
  return typeof value === 'object' && value !== null && value.kind === 'file';
}

/** The one text value of `name`, undefined when absent; a 400 naming it when it is a file or sent twice. */
export function textField(fields: UploadFields, name: string): string | undefined {
  const values = fields.get(name);
  if (values === undefined || values.length === 0) return undefined;
  const [value] = values;
  if (values.length > 1 || typeof value !== 'string') {
    throw new InvalidRequestError(`Invalid value for '${name}': expected a single string.`, name, 'invalid_type');
  }
  return value;
}

/** The text values of an array field, sent as `name[]` (the SDKs) or `name` repeated. */
export function textList(fields: UploadFields, name: string): string[] | undefined {
  const values = [...(fields.get(`${name}[]`) ?? []), ...(fields.get(name) ?? [])];
  if (values.length === 0) return undefined;
  if (values.some((value) => typeof value !== 'string')) {
    throw new InvalidRequestError(`Invalid value for '${name}': expected strings.`, name, 'invalid_type');
  }
  return values as string[];
}

/** The files of `name` (or `name[]`), in order; a 400 naming it when a value is text. */
export function fileList(fields: UploadFields, name: string): UploadedFile[] {
  const values = [...(fields.get(name) ?? []), ...(fields.get(`${name}[]`) ?? [])];
  if (values.some((value) => !isUploadedFile(value))) {
    throw new InvalidRequestError(`Invalid value for '${name}': expected a file, got a string.`, name, 'invalid_type');
  }
  return values as UploadedFile[];
}
