/**
 * Quota slices in the store (docs/architecture.md, Money: "Quota slices"): a slice as the store
 * keeps it, what a process asks for when it wants one, what a hold admitted from one writes as its
 * row, and the part of the money port (MoneyStore, store.ts) that keeps slices.
 */

/**
 * A hold admitted in memory from a quota slice (docs/architecture.md, Money: "Quota slices"): no
 * row until it settles or reaches its first checkpoint, when its row is written from this, keyed by
 * the hold's id, and its amount leaves the slice.
 */
export interface SliceHold {
  sliceId: string;
  accountId: string;
  keyId: string;
  requestId: string;
  model: string;
  amountNanos: bigint;
  surface?: string;
  admittedAt: Date;
}

export type SliceState = 'active' | 'recalled' | 'closed';

/** A quota slice as the store keeps it. */
export interface SliceRecord {
  id: string;
  accountId: string;
  /** The process that admits from it. */
  owner: string;
  /** Counted in the account's reserved amount: not admitted yet, or admitted and not yet a hold row. */
  amountNanos: bigint;
  state: SliceState;
  leaseUntil: Date;
  createdAt: Date;
}

/** What a process asks for when it wants a slice of an account's balance. */
export interface SliceRequest {
  id: string;
  accountId: string;
  owner: string;
  /** The largest slice. */
  maxNanos: bigint;
  /** No slice smaller than this. */
  minNanos: bigint;
  /** The slice is at most 1/headroom of what the account has unreserved, and granted only then. */
  headroom: number;
  leaseUntil: Date;
}

/** The money port's quota slices (MoneyStore extends it). */
export interface SliceStore {
  /**
   * Reserves a quota slice of the account for `request.owner`, atomically: `maxNanos`, or 1/headroom
   * of the account's unreserved balance when that is less, granted only when it is at least
   * `minNanos` and the account is enabled. Undefined (nothing changed) otherwise.
   */
  grantSlice(request: SliceRequest): Promise<SliceRecord | undefined>;
  /**
   * Closes a slice of `owner` (active or recalled) and gives `returnNanos` of it back to its
   * account, once: false, changing nothing, when it was closed already or is gone. What stays in it
   * belongs to holds admitted from it, which leave it as they settle or reach their first checkpoint.
   */
  closeSlice(sliceId: string, owner: string, returnNanos: bigint): Promise<boolean>;
  /** Extends the lease of `owner`'s slices `sliceIds`; returns the ids still there. */
  renewSlices(owner: string, sliceIds: readonly string[], leaseUntil: Date): Promise<string[]>;
  /** Marks the active slices of the account that other owners hold as recalled; returns their ids. */
  recallSlices(accountId: string, exceptOwner: string): Promise<string[]>;
  /** Ids of `owner`'s slices that another process recalled. */
  recalledSlices(owner: string): Promise<string[]>;
  /** Deletes `owner`'s closed slices that hold nothing any more. */
  dropClosedSlices(owner: string): Promise<void>;
  /**
   * Ends slices whose lease has passed (their owner died): what is left in each goes back to its
   * account. Returns how many.
   */
  releaseExpiredSlices(now: Date): Promise<number>;
  /** An account's slices (every account's without one), oldest first. */
  listSlices(accountId?: string): Promise<SliceRecord[]>;
}
