/**
 * What stands between a credential and the database lookup that checks it, for every door: /v1
 * and the key holder's console routes (API keys), the admin API and /metrics (admin tokens), the
 * console's sign-in and session cookies.
 *
 * - **Failures are counted, nothing else**: a credential that turns out to be no usable one takes
 *   one point from its client address's allowance (`rate_limits.auth_failures_per_minute`, on the
 *   shared limit store, so across instances with Redis); past it, the failure is answered with the
 *   spec's 429 instead of the 401. A usable credential costs the allowance nothing and is never
 *   refused for its address's failures: an address past its allowance still has its credentials
 *   looked up, so a fresh key works from it.
 * - **The database is protected by a budget, not by the allowance**: each process may look up
 *   `rate_limits.auth_lookups_per_second` credentials (ratelimit/lookup-budget.ts). Half of each
 *   second's budget is kept for addresses within their allowance, so one address flooding past it
 *   cannot spend the lookups other clients' new keys need. A lookup the budget refuses is the
 *   spec's 429 with `retry-after` (a second at most), before the database; that is the one case in
 *   which a valid credential not cached yet is refused (a crowd of addresses spending the whole
 *   budget), and the price of a bounded database load. A key already known to this process, good
 *   (cached) or bad (unknown, disabled, expired), needs no lookup and no budget.
 * - **Two doors, counted apart**: API keys (`key`), and admin tokens with console session cookies
 *   (`admin`, which may stand for an admin token). Each has its own allowance per address and its
 *   own budget, so a flood of made-up API keys never locks an operator out, nor the other way round.
 *
 * The client address is Fastify's `request.ip`: the TCP peer, or, when the peer is one of
 * `server.trusted_proxies`, the nearest address in `X-Forwarded-For` that is not (app.ts).
 */
import type { FastifyRequest } from 'fastify';
import type { LookupGuard } from '../auth/authenticator.js';
import { GatewayError } from '../errors/gateway-error.js';
import { retryAfterHeaders } from '../ratelimit/headers.js';
import type { Limiter } from '../ratelimit/limiter.js';
import { LookupBudget } from '../ratelimit/lookup-budget.js';

/** Which credentials a guard stands for: API keys, or admin tokens and console sessions. */
export type AuthDoor = 'key' | 'admin';

export interface AuthGuardsOptions {
  limiter: Limiter;
  /** Failed authentications per address per minute, per door; 0: not limited. */
  failuresPerMinute: number;
  /** Credential lookups this process may make per second, per door; 0: not limited. */
  lookupsPerSecond: number;
  now: () => number;
}

/** Limit-store subject prefix per door (the key door keeps the name it always had). */
const SUBJECT_PREFIX: Readonly<Record<AuthDoor, string>> = { key: 'authfail', admin: 'authfail-admin' };

export class AuthGuards {
  private readonly budgets: Readonly<Record<AuthDoor, LookupBudget>>;

  constructor(private readonly options: AuthGuardsOptions) {
    const budget = () => new LookupBudget({ perSecond: options.lookupsPerSecond, now: options.now });
    this.budgets = { key: budget(), admin: budget() };
  }

  /**
   * The guard of one request's credential at `door`: one small object whose methods live on its
   * class (a cached key never asks it anything, and /v1 makes one per request). The client address
   * is read only when the guard is asked.
   */
  guard(door: AuthDoor, request: Pick<FastifyRequest, 'ip'>): LookupGuard {
    return new AddressGuard(this.options, this.budgets[door], SUBJECT_PREFIX[door], request);
  }
}

class AddressGuard implements LookupGuard {
  constructor(
    private readonly options: AuthGuardsOptions,
    private readonly budget: LookupBudget,
    private readonly prefix: string,
    private readonly request: Pick<FastifyRequest, 'ip'>,
  ) {}

  async beforeLookup(): Promise<void> {
    const budget = this.budget;
    if (budget.take(false)) return;
    // The open half is spent: the rest is for addresses within their allowance of failures.
    if (!budget.spent && (await this.inGoodStanding()) && budget.take(true)) return;
    const decision = { allowed: false, limit: 0, remaining: 0, resetMs: budget.msUntilRefill };
    throw new GatewayError('rate_limited', { headers: retryAfterHeaders(decision) });
  }

  async failed(): Promise<void> {
    const { limiter, failuresPerMinute } = this.options;
    if (failuresPerMinute <= 0) return;
    const decision = await limiter.consume(this.subject, 1, failuresPerMinute, 60);
    if (!decision.allowed) throw new GatewayError('rate_limited', { headers: retryAfterHeaders(decision) });
  }

  /** Taking no points reads the address's window without changing it. */
  private async inGoodStanding(): Promise<boolean> {
    const { limiter, failuresPerMinute } = this.options;
    return failuresPerMinute <= 0 || (await limiter.consume(this.subject, 0, failuresPerMinute, 60)).remaining > 0;
  }

  private get subject(): string {
    return `${this.prefix}:${this.request.ip}`;
  }
}

/** `lookUp` behind `guard`: asked before it, and told when it found no usable credential. */
export async function lookUpGuarded<T>(guard: LookupGuard, lookUp: () => Promise<T | undefined>): Promise<T | undefined> {
  await guard.beforeLookup();
  const found = await lookUp();
  if (found === undefined) await guard.failed();
  return found;
}
