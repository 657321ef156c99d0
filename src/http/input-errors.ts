/**
 * The 400 the admin API and the console answer for input their zod schemas refuse, in the format
 * both use: `Invalid request: <field>: <what is wrong>`, with the field as `param`. An unknown field
 * is refused the way `/v1` refuses one (code `unknown_parameter`, the field named); names the
 * client chose are clipped like every other echo of client text (protocol/client-echo.ts).
 */
import { GatewayError } from '../errors/gateway-error.js';
import { clipEcho, memberPath } from '../protocol/client-echo.js';

/** What this needs of a zod issue, or of the copy Fastify's zod validator keeps of one. */
export interface InputIssue {
  code: string;
  /** Where the issue is, from the top of the input. */
  path: readonly PropertyKey[];
  message: string;
  /** For `unrecognized_keys`: the fields the schema does not know. */
  keys?: readonly string[];
}

export function invalidInputError(issue: InputIssue | undefined): GatewayError {
  if (issue === undefined) return new GatewayError('invalid_request', { message: 'Invalid request: invalid value' });
  const where = issue.path.map((step) => clipEcho(String(step))).join('.');
  const unknown = issue.code === 'unrecognized_keys' ? issue.keys?.[0] : undefined;
  if (unknown !== undefined) {
    const param = where === '' ? clipEcho(unknown) : memberPath(where, unknown);
    return new GatewayError('invalid_request', { message: `Invalid request: ${param}: unrecognized field.`, param, code: 'unknown_parameter' });
  }
  return new GatewayError('invalid_request', {
    message: `Invalid request: ${where === '' ? '' : `${where}: `}${issue.message}`,
    param: where === '' ? null : where,
  });
}
