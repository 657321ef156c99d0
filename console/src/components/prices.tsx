import { Usd } from './usd';

/** The header cells of a model's prices per million tokens, in the order `PriceCells` fills them. */
export function PriceHeaders() {
  return (
    <>
      <th scope="col" class="number">Input</th>
      <th scope="col" class="number">Cached input</th>
      <th scope="col" class="number">Output</th>
    </>
  );
}

/** A model's prices per million tokens (decimal USD strings); a cached price left out reads "as input". */
export function PriceCells({ input, cached, output }: { input: string; cached: string; output: string }) {
  return (
    <>
      <td data-label="Input" class="number">
        <Usd value={input} />
      </td>
      <td data-label="Cached input" class="number">
        {cached === '' ? <span class="muted">as input</span> : <Usd value={cached} />}
      </td>
      <td data-label="Output" class="number">
        <Usd value={output} />
      </td>
    </>
  );
}
