/**
 * Quota slices (docs/architecture.md, Money: "Quota slices"; the credit-control pattern of telecom
 * charging, RFC 4006): this process reserves a slice of a busy account's balance in one durable
 * write and admits holds from it in memory, with no database write at admission. The database
 * counts the slice in the account's reserved amount exactly as it counts an open hold, so what
 * other processes can hold is decided as before; this class only decides, without I/O, which of
 * this process's requests the slice covers.
 *
 * What it keeps per slice is the slice row's amount as this process knows it and the part of it
 * admitted to holds that have not left it yet. A hold leaves its slice when its settlement resolves
 * (settled out of it, or found settled already) or when its first checkpoint has moved it into a
 * hold row (`released`); the database makes both moves. Money safety does not rest on this
 * bookkeeping: every database step that takes from a slice is guarded by what the slice row holds,
 * so a mistake here can leave a request unbilled, never a balance spent twice.
 *
 * A slice:
 * - is granted to a busy account: when a hold of it took the exact path (a hold row through the
 *   guarded UPDATE) while another of its holds was running in this process. It is at most
 *   `maxNanos` and at most 1/headroom of the account's unreserved balance, and only when that is
 *   at least twice the hold that asked: slices shrink as a balance runs low, and a low balance has
 *   none. A refused grant is not asked again for `idleMs`. An account whose requests come one at a
 *   time keeps the exact path: its holds would gain little, and each is then a row from its start
 *   to its end, as before.
 * - admits while its lease has more than a third left; its owner renews the leases it holds on a
 *   timer (one write for all), and a slice the renewal no longer finds (swept: its lease had passed)
 *   admits no more.
 * - is closed, its unused part given back in one write, when a hold does not fit in it, when it
 *   admitted nothing for `idleMs`, when another process recalls it, and at shutdown. A close is
 *   made once (the database closes only a slice that is not closed), so a retried close never gives
 *   back twice.
 * - is recalled when the exact path refuses a hold of its account: the refusing process closes its
 *   own slices of the account, marks the other processes' active slices recalled (they close them
 *   at their next tick), waits for those (at most `recallWaitMs`: an owner that died never
 *   answers), and the hold is tried once more. Every slice of the account that existed at the
 *   refusal is then closed (its unused part back), recalled and waited for, or gone, so slices of
 *   other processes do not make it refuse a request the balance covers. An account that cannot pay
 *   is never remembered beyond the request: a credit is spendable at once.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { idSuffix } from '../lib/ids.js';
import type { MoneyStore } from '../store/store.js';

export interface QuotaSlicesOptions {
  store: Pick<MoneyStore, 'grantSlice' | 'closeSlice' | 'renewSlices' | 'recallSlices' | 'recalledSlices' | 'dropClosedSlices' | 'listSlices'>;
  /** This process, as slice rows name their owner. */
  owner: string;
  /** The largest slice. */
  maxNanos: bigint;
  /** A slice is at most 1/headroom of the account's unreserved balance. */
  headroom: number;
  /** A slice that admitted nothing for this long is closed. */
  idleMs: number;
  /** How long a slice outlives its owner's last renewal (the hold TTL). */
  leaseMs: number;
  /** How often recalls are looked for, idle slices closed and leases renewed when due. */
  tickMs: number;
  /** How long a refused hold waits for the slices it recalled. */
  recallWaitMs: number;
  now: () => number;
  onError: (error: unknown, step: string) => void;
}

interface Slice {
  readonly id: string;
  readonly accountId: string;
  /** The slice row's amount as this process knows it: granted, less what left it. */
  amountNanos: bigint;
  /** Admitted to holds that have not left it yet. */
  inUseNanos: bigint;
  /** The account's slice here, admitting. */
  admitting: boolean;
  /** What a close gives back (set once admitting stops); its close is under way while `closing`. */
  returnNanos: bigint | undefined;
  closing: Promise<void> | undefined;
  /** Its unused part is back with the account (closed), or it is gone (swept). */
  closed: boolean;
  /** What it holds is no longer known exactly (a settlement given up): nothing is given back, its lease ends it. */
  uncertain: boolean;
  leaseUntil: number;
  usedAt: number;
}

const RECALL_POLL_MS = 20;

export class QuotaSlices {
  /** The admitting slice of each account. */
  private readonly admitting = new Map<string, Slice>();
  /** Every slice this process still answers for, by id. */
  private readonly slices = new Map<string, Slice>();
  private readonly byHold = new Map<string, { slice: Slice; amountNanos: bigint }>();
  /** Holds running in this process (admitted, not settled yet), by id: their account. */
  private readonly runningHolds = new Map<string, string>();
  /** How many holds of each account run in this process. */
  private readonly runningByAccount = new Map<string, number>();
  private readonly granting = new Map<string, Promise<void>>();
  private readonly noGrantUntil = new Map<string, number>();
  private readonly recalling = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private dropEmpty = false;
  private stopped = false;

  constructor(private readonly options: QuotaSlicesOptions) {
    if (options.maxNanos <= 0n) throw new RangeError('the largest slice must be positive');
    if (!Number.isSafeInteger(options.headroom) || options.headroom < 2) throw new RangeError(`slice headroom must be an integer ≥ 2, got ${options.headroom}`);
  }

  /** Slices admitting now (the `tollgate_quota_slices` gauge). */
  get size(): number {
    return this.admitting.size;
  }

  /**
   * Admits hold `holdId` of `amountNanos` from the account's slice, in memory; returns the slice's
   * id, or undefined when there is none or it cannot: then the hold takes the exact path.
   */
  admit(accountId: string, holdId: string, amountNanos: bigint): string | undefined {
    const slice = this.admitting.get(accountId);
    if (slice === undefined) return undefined;
    const now = this.options.now();
    // Only well inside the lease: a renewal that lags stops admission long before a sweep could end it.
    if (now >= slice.leaseUntil - this.options.leaseMs / 3) return undefined;
    if (slice.amountNanos - slice.inUseNanos < amountNanos) {
      // Too little left for this hold: the rest goes back, and a new slice may follow.
      this.giveBack(slice);
      return undefined;
    }
    slice.inUseNanos += amountNanos;
    slice.usedAt = now;
    this.byHold.set(holdId, { slice, amountNanos });
    this.begin(accountId, holdId);
    return slice.id;
  }

  /** Hold `holdId` of the account took the exact path: when others of it run here, a slice may serve the next ones. */
  openedExactly(accountId: string, holdId: string, amountNanos: bigint): void {
    this.begin(accountId, holdId);
    if ((this.runningByAccount.get(accountId) ?? 0) >= 2) this.wanted(accountId, amountNanos);
  }

  /** Hold `holdId`'s settlement resolved (settled now or before, or its slice is gone). Idempotent. */
  settled(holdId: string): void {
    this.end(holdId);
    this.released(holdId);
  }

  private begin(accountId: string, holdId: string): void {
    this.runningHolds.set(holdId, accountId);
    this.runningByAccount.set(accountId, (this.runningByAccount.get(accountId) ?? 0) + 1);
  }

  private end(holdId: string): void {
    const accountId = this.runningHolds.get(holdId);
    if (accountId === undefined) return;
    this.runningHolds.delete(holdId);
    const running = (this.runningByAccount.get(accountId) ?? 1) - 1;
    if (running > 0) this.runningByAccount.set(accountId, running);
    else this.runningByAccount.delete(accountId);
  }

  private wanted(accountId: string, amountNanos: bigint): void {
    if (this.stopped || this.admitting.has(accountId) || this.granting.has(accountId)) return;
    const until = this.noGrantUntil.get(accountId);
    if (until !== undefined && until > this.options.now()) return;
    const minNanos = amountNanos * 2n;
    if (minNanos > this.options.maxNanos) return;
    const grant = this.grant(accountId, minNanos).finally(() => this.granting.delete(accountId));
    this.granting.set(accountId, grant);
  }

  /**
   * Hold `holdId` has left its slice in the database (its settlement resolved, or its first
   * checkpoint moved it into a hold row), or its slice is gone. Idempotent.
   */
  released(holdId: string): void {
    const entry = this.byHold.get(holdId);
    if (entry === undefined) return;
    this.byHold.delete(holdId);
    entry.slice.inUseNanos -= entry.amountNanos;
    entry.slice.amountNanos -= entry.amountNanos;
    this.forgetIfDone(entry.slice);
  }

  /** Hold `holdId`'s settlement was given up: whether it left its slice is unknown. */
  abandoned(holdId: string): void {
    this.end(holdId);
    const entry = this.byHold.get(holdId);
    if (entry === undefined) return;
    this.byHold.delete(holdId);
    const { slice } = entry;
    slice.inUseNanos -= entry.amountNanos;
    slice.uncertain = true;
    this.stopAdmitting(slice);
    this.forgetIfDone(slice);
  }

  /**
   * The exact path refused a hold of the account: the unused parts of its slices come back (this
   * process's at once, the other processes' recalled and waited for), so that trying the hold once
   * more decides it on everything the account has that no hold took. A recall already under way for
   * the account is shared.
   */
  recall(accountId: string): Promise<void> {
    let running = this.recalling.get(accountId);
    if (running === undefined) {
      running = this.recallOnce(accountId).finally(() => this.recalling.delete(accountId));
      this.recalling.set(accountId, running);
    }
    return running;
  }

  /** Gives every unused part back and stops the timer (the drain; after the last settlement). */
  async close(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled([...this.granting.values()]);
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.ticking;
    for (const slice of [...this.slices.values()]) this.giveBack(slice);
    await Promise.all([...this.slices.values()].map((slice) => slice.closing));
    if (this.dropEmpty) await this.dropClosed();
  }

  private async grant(accountId: string, minNanos: bigint): Promise<void> {
    const { options } = this;
    try {
      const record = await options.store.grantSlice({
        id: `slice_${idSuffix()}`,
        accountId,
        owner: options.owner,
        maxNanos: options.maxNanos,
        minNanos,
        headroom: options.headroom,
        leaseUntil: new Date(options.now() + options.leaseMs),
      });
      if (record === undefined) {
        this.noGrantUntil.set(accountId, options.now() + options.idleMs);
        return;
      }
      const slice: Slice = {
        id: record.id,
        accountId,
        amountNanos: record.amountNanos,
        inUseNanos: 0n,
        admitting: true,
        returnNanos: undefined,
        closing: undefined,
        closed: false,
        uncertain: false,
        leaseUntil: record.leaseUntil.getTime(),
        usedAt: options.now(),
      };
      this.slices.set(slice.id, slice);
      this.admitting.set(accountId, slice);
      // Shutting down meanwhile: straight back.
      if (this.stopped) this.giveBack(slice);
      else this.timer ??= this.startTimer();
    } catch (error) {
      this.noGrantUntil.set(accountId, options.now() + options.idleMs);
      options.onError(error, 'granting a quota slice');
    }
  }

  private stopAdmitting(slice: Slice): void {
    if (!slice.admitting) return;
    slice.admitting = false;
    if (this.admitting.get(slice.accountId) === slice) this.admitting.delete(slice.accountId);
    // Fixed now: settles and checkpoints take as much from the amount as from what is in use.
    slice.returnNanos = slice.amountNanos - slice.inUseNanos;
  }

  /** Closes the slice and gives its unused part back, once; a close that failed is tried again by the tick. */
  private giveBack(slice: Slice): void {
    this.stopAdmitting(slice);
    const returnNanos = slice.returnNanos;
    if (slice.closed || slice.uncertain || slice.closing !== undefined || returnNanos === undefined) return;
    slice.closing = this.options.store.closeSlice(slice.id, this.options.owner, returnNanos).then(
      () => {
        // False too means it is closed (an earlier attempt that committed) or gone (swept).
        slice.amountNanos -= returnNanos;
        slice.closed = true;
        slice.closing = undefined;
        this.forgetIfDone(slice);
      },
      (error: unknown) => {
        slice.closing = undefined;
        this.options.onError(error, 'returning a quota slice');
      },
    );
  }

  private forgetIfDone(slice: Slice): void {
    if (slice.admitting || slice.inUseNanos > 0n || !(slice.closed || slice.uncertain)) return;
    this.slices.delete(slice.id);
    if (slice.closed) this.dropEmpty = true;
  }

  private async recallOnce(accountId: string): Promise<void> {
    const own = this.admitting.get(accountId);
    if (own !== undefined) this.giveBack(own);
    await Promise.all([...this.slices.values()].filter((slice) => slice.accountId === accountId).map((slice) => slice.closing));
    try {
      const recalled = await this.options.store.recallSlices(accountId, this.options.owner);
      if (recalled.length > 0) await this.awaitReturned(accountId, new Set(recalled));
    } catch (error) {
      this.options.onError(error, 'recalling quota slices');
    }
  }

  /** Until none of `ids` is still recalled (their owners closed them), or `recallWaitMs` has passed (an owner is dead). */
  private async awaitReturned(accountId: string, ids: ReadonlySet<string>): Promise<void> {
    const deadline = this.options.now() + this.options.recallWaitMs;
    while (this.options.now() < deadline) {
      await sleep(RECALL_POLL_MS);
      const slices = await this.options.store.listSlices(accountId);
      if (!slices.some((slice) => ids.has(slice.id) && slice.state === 'recalled')) return;
    }
  }

  private startTimer(): NodeJS.Timeout {
    const timer = setInterval(() => {
      this.ticking ??= this.tick().finally(() => (this.ticking = undefined));
    }, this.options.tickMs);
    // A process that is stopping must not be kept alive by it; a dead process's slices end with their lease.
    timer.unref();
    return timer;
  }

  /** One round: idle slices closed, failed closes tried again, recalls answered, leases renewed, empty rows dropped. */
  private async tick(): Promise<void> {
    const { options } = this;
    const now = options.now();
    for (const slice of [...this.admitting.values()]) if (now - slice.usedAt >= options.idleMs) this.giveBack(slice);
    for (const slice of this.slices.values()) if (!slice.admitting && slice.closing === undefined) this.giveBack(slice);
    for (const [accountId, until] of this.noGrantUntil) if (until <= now) this.noGrantUntil.delete(accountId);
    await this.step('answering recalls', async () => {
      if (this.admitting.size === 0) return;
      for (const id of await options.store.recalledSlices(options.owner)) {
        const slice = this.slices.get(id);
        if (slice !== undefined) this.giveBack(slice);
      }
    });
    await this.step('renewing quota slices', () => this.renew(now));
    if (this.dropEmpty) await this.dropClosed();
  }

  /** Renews every slice still answered for once any has only two thirds of its lease left. */
  private async renew(now: number): Promise<void> {
    const { options } = this;
    const slices = [...this.slices.values()];
    if (!slices.some((slice) => slice.leaseUntil - now <= (options.leaseMs * 2) / 3)) return;
    const leaseUntil = now + options.leaseMs;
    const kept = new Set(await options.store.renewSlices(options.owner, slices.map((slice) => slice.id), new Date(leaseUntil)));
    for (const slice of slices) {
      if (kept.has(slice.id)) {
        slice.leaseUntil = leaseUntil;
        continue;
      }
      // Swept (its lease had passed): what it held went back to the account, nothing is left to give.
      this.stopAdmitting(slice);
      slice.closed = true;
      this.forgetIfDone(slice);
    }
  }

  private async dropClosed(): Promise<void> {
    this.dropEmpty = false;
    await this.step('dropping empty quota slices', async () => {
      try {
        await this.options.store.dropClosedSlices(this.options.owner);
      } catch (error) {
        this.dropEmpty = true;
        throw error;
      }
    });
  }

  private async step(name: string, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      this.options.onError(error, name);
    }
  }
}
