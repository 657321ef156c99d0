/**
 * Images of the canonical model as Gemini parts: a `data:` URL travels inline (`inlineData`, base64),
 * any other URL by reference (`fileData`), with its media type guessed from the file extension.
 * https://ai.google.dev/api/caching#Part (docs/wire-protocols.md §5.2, §5.6).
 */

export type GeminiMediaPart = { inlineData: { mimeType: string; data: string } } | { fileData: { fileUri: string; mimeType?: string } };

/** Media types by file extension, for the formats Gemini reads. */
const MEDIA_TYPES: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
};

/** What a `data:` URL without a media type means (RFC 2397). */
const DEFAULT_DATA_MEDIA_TYPE = 'text/plain';

/** The Gemini part for an image given by URL. */
export function imagePart(url: string): GeminiMediaPart {
  const inline = dataUrlPart(url);
  if (inline !== undefined) return inline;
  const mimeType = mediaTypeFromExtension(url);
  return { fileData: { fileUri: url, ...(mimeType === undefined ? {} : { mimeType }) } };
}

function dataUrlPart(url: string): GeminiMediaPart | undefined {
  if (!url.slice(0, 5).toLowerCase().startsWith('data:')) return undefined;
  const comma = url.indexOf(',');
  if (comma < 0) return undefined;
  const header = url.slice(5, comma).split(';');
  const payload = url.slice(comma + 1);
  const mimeType = header[0]?.trim().toLowerCase() || DEFAULT_DATA_MEDIA_TYPE;
  const isBase64 = header.slice(1).some((parameter) => parameter.trim().toLowerCase() === 'base64');
  // Gemini wants base64; a percent-encoded payload is re-encoded.
  const data = isBase64 ? payload.replace(/\s+/g, '') : Buffer.from(safeDecode(payload), 'utf8').toString('base64');
  return { inlineData: { mimeType, data } };
}

function mediaTypeFromExtension(url: string): string | undefined {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    path = url.split(/[?#]/, 1)[0] ?? '';
  }
  const extension = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase();
  return extension === undefined ? undefined : MEDIA_TYPES[extension];
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
