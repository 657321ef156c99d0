/**
 * Request bodies: every body is read as text (whatever its content type, as OpenAI does) and parsed
 * here, after the key and rate-limit checks, so that the spec's check order holds.
 */
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../errors/gateway-error.js';

export function registerBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
}

/** The parsed JSON of a raw body, or the spec's 400 for malformed JSON (an empty body included). */
export function parseJsonBody(raw: unknown): unknown {
  if (typeof raw !== 'string' || raw.trim() === '') throw new GatewayError('invalid_json');
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw new GatewayError('invalid_json');
  }
}
