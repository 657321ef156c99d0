/**
 * `service_tier`, shared by both surfaces. Tollgate bills one price per model, so only the tiers
 * that cost the upstream's standard price are accepted: a client must not be able to buy
 * OpenAI's priority processing (or any other tier) through a pass-through at the flat price.
 */
import { optionalEnum, unsupportedValue } from './field-checks.js';

const SERVICE_TIERS = ['auto', 'default', 'flex', 'scale', 'priority'] as const;
const BILLED_TIERS: readonly string[] = ['auto', 'default'];

export function checkServiceTier(value: unknown): void {
  const tier = optionalEnum(value, 'service_tier', SERVICE_TIERS);
  if (tier !== undefined && !BILLED_TIERS.includes(tier)) {
    throw unsupportedValue('service_tier', `Unsupported value: 'service_tier' '${tier}' is not available through this gateway, which bills one price per model. Use 'auto' or 'default'.`);
  }
}
