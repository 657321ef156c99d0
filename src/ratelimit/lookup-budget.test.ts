import { describe, expect, it } from 'vitest';
import { LookupBudget } from './lookup-budget.js';

describe('lookup budget', () => {
  it('gives anyone the open half of each second and only clients in good standing the rest', () => {
    let clock = 10_000;
    const budget = new LookupBudget({ perSecond: 5, now: () => clock });
    // The open half of 5 is 3.
    expect([budget.take(false), budget.take(false), budget.take(false), budget.take(false)]).toEqual([true, true, true, false]);
    expect(budget.spent).toBe(false);
    expect([budget.take(true), budget.take(true), budget.take(true)]).toEqual([true, true, false]);
    expect(budget.spent).toBe(true);
    clock += 400;
    expect(budget.msUntilRefill).toBe(600);
    expect(budget.take(true)).toBe(false);
    // A new second, a new budget.
    clock += 600;
    expect(budget.spent).toBe(false);
    expect(budget.take(false)).toBe(true);
  });

  it('is off at 0', () => {
    const budget = new LookupBudget({ perSecond: 0, now: () => 0 });
    for (let index = 0; index < 100; index += 1) expect(budget.take(false)).toBe(true);
    expect(budget.spent).toBe(false);
  });
});
