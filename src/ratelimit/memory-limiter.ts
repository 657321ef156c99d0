import { RateLimiterMemory } from 'rate-limiter-flexible';
import { createFlexibleLimiter, type Limiter } from './limiter.js';

/** Limits kept in this process: right for one instance on its own. */
export function createMemoryLimiter(): Limiter {
  return createFlexibleLimiter((options) => new RateLimiterMemory(options));
}
