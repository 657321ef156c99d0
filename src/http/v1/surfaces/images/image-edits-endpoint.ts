/**
 * `POST /v1/images/edits` (docs/wire-protocols.md §8.2, §16) as a whole answer (whole-answer.ts)
 * whose body is a multipart upload (upload.ts, bounded by `limits.max_upload_bytes.image-edits`):
 * the images (`image`, or `image[]` for several) and an optional `mask` as files, the rest as one
 * text each; a text where a file is due, a file where a text is due, or a name OpenAI does not know
 * is a 400. The form is forwarded as it came, fields and files in order, the model replaced.
 * Answered and billed as generations are (image-answers.ts), each input file held at the most an
 * image costs on the model's targets.
 */
import { InvalidRequestError } from '../../../../protocol/canonical.js';
import { unknownParameter } from '../../../../protocol/field-checks.js';
import {
  countImageInputTokens,
  decodeImageEditRequest,
  IMAGE_EDIT_FILE_FIELDS,
  IMAGE_EDIT_TEXT_FIELDS,
  type ImageEditRequest,
  type ImageFile,
} from '../../../../protocol/images.js';
import { servesEndpoint } from '../../../../routing/catalog.js';
import { fileList, textField, type UploadFields } from '../../upload.js';
import type { WholeBody, WholeEndpoint } from '../../whole-answer.js';
import { callImages, holdImages, imageInputBound } from './image-answers.js';

function fieldsOf(body: WholeBody): UploadFields {
  if (body.kind !== 'upload') throw new Error('the image edits endpoint was given a JSON body');
  return body.fields;
}

function decode(fields: UploadFields): ImageEditRequest {
  const texts = new Map<string, string>();
  for (const name of fields.keys()) {
    if (IMAGE_EDIT_FILE_FIELDS.has(name)) continue;
    if (!IMAGE_EDIT_TEXT_FIELDS.has(name)) throw unknownParameter(name);
    texts.set(name, textField(fields, name)!);
  }
  const images = fileList(fields, 'image');
  const masks = fileList(fields, 'mask');
  if (masks.length > 1) throw new InvalidRequestError("Invalid value for 'mask': expected a single file.", 'mask', 'invalid_type');
  return decodeImageEditRequest(texts, images, masks[0]);
}

/** The form to forward: every field and file as the client sent it, in order. */
function formOf(fields: UploadFields): (readonly [string, string | ImageFile])[] {
  const form: (readonly [string, string | ImageFile])[] = [];
  for (const [name, values] of fields) for (const value of values) form.push([name, value]);
  return form;
}

export const imageEditsEndpoint: WholeEndpoint<ImageEditRequest> = {
  surface: 'image-edits',
  upload: 'image-edits',
  decode: (body) => decode(fieldsOf(body)),
  countInput: (request) => () => countImageInputTokens(request),
  inputBound: imageInputBound,
  hold: holdImages,
  serves: (target) => servesEndpoint(target.provider, 'image-edits'),
  call: (target, request, body, signal, requestId, prices) => callImages(target, { body: { kind: 'edit', request, form: formOf(fieldsOf(body)) }, signal, requestId }, prices),
  answer: (result) => result.body,
};
