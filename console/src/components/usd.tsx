import { formatUsd } from '../money';

/** An amount in dollars, exact to the nano-dollar (see money.ts); the raw value on hover. */
export function Usd({ value, signed }: { value: string; signed?: '+' | '−' }) {
  return (
    <span class="amount" title={`${value} USD`}>
      {signed === undefined ? '' : `${signed} `}
      {formatUsd(value)}
    </span>
  );
}
