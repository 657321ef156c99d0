/**
 * The `/v1` endpoints as operators know them (their paths), by the surface name the admin API uses
 * in the request log's `surface` and the usage report's `by=endpoint` groups: the server's own
 * table (a pure constant of src/protocol/), so a surface added there is known here at once.
 */
import { SURFACE_PATHS as PATHS } from '../../src/protocol/canonical.js';
import type { Surface } from './types';

/** Every endpoint, in the order the filter offers them. */
export const ENDPOINTS = Object.keys(PATHS) as Surface[];

/** Whether `name` is an endpoint this console knows (not `unknown`, not none). */
export function isEndpoint(name: string): name is Surface {
  return Object.hasOwn(PATHS, name);
}

/** The usage report's group for charges billed before the ledger recorded endpoints. */
const NOT_RECORDED = 'unknown';

/**
 * What an endpoint group or a request's surface is called on a page: its path; for the usage
 * report's `unknown`, that it was not recorded; for none (a request to no endpoint, such as an
 * unknown route's 404), that; and a name this console does not know (a newer server's) as it is.
 */
export function endpointLabel(surface: string | null): string {
  if (surface === null || surface === '') return 'No endpoint';
  if (surface === NOT_RECORDED) return 'Not recorded (older charges)';
  return isEndpoint(surface) ? PATHS[surface] : surface;
}
