/**
 * The models the key may use now, with the endpoints each serves, their prices per million tokens
 * and what they bill each (per image, per second of audio, per million characters), from
 * /console/api/self/models; and what a request holds before it runs, next to what the key has left
 * (its budget's, else the account's), so that a refused request explains itself.
 */
import { api } from '../api';
import { PageHeading } from '../components/heading';
import { ErrorNotice, Loading } from '../components/notice';
import { TableWrap } from '../components/table-wrap';
import { Usd } from '../components/usd';
import { availableUsd, usdToNanos } from '../money';
import type { SelfModel, SelfView } from '../types';
import { useLoad } from '../use-load';

/** What a hold may take now: the key budget's remainder, or the account's available balance when that is less (or there is no budget). */
function leftToHold(self: SelfView): { usd: string; what: string } {
  const available = availableUsd(self.account);
  const budget = self.key.budget;
  if (budget === null || usdToNanos(budget.remaining_usd) > usdToNanos(available)) return { usd: available, what: "your account's available balance" };
  return { usd: budget.remaining_usd, what: "your key's budget" };
}

function HoldExplained({ self }: { self: SelfView }) {
  const left = leftToHold(self);
  return (
    <p class="help hold-explained">
      Before a request runs, the most it can cost is held: its input, plus its output allowance at the output price. Without{' '}
      <code>max_tokens</code> (or <code>max_output_tokens</code>) that allowance is the model's whole maximum, shown as <em>Output hold</em>; a request that sets a
      smaller one holds that much less. Left to hold now: <strong><Usd value={left.usd} /></strong> ({left.what}). A request whose hold is more is refused (403), and its{' '}
      <code>x-tollgate-hold-needed-usd</code> header says how much it needed. You pay only for what is used.
    </p>
  );
}

export function ModelsPage() {
  const models = useLoad(() => api.selfModels(), []);
  const self = useLoad(() => api.self(), []);
  return (
    <>
      <PageHeading title="Models" />
      <p class="help">Prices in US dollars per million tokens, unless the column says otherwise. Reasoning tokens count as output.</p>
      {self.data === undefined ? null : <HoldExplained self={self.data} />}
      <ErrorNotice error={models.error} />
      {models.data === undefined ? (
        models.loading ? <Loading what="models" /> : null
      ) : models.data.data.length === 0 ? (
        <p>Your key cannot use any model right now.</p>
      ) : (
        <TableWrap label="Models and prices">
          <table>
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col" class="number">
                  Input
                </th>
                <th scope="col" class="number">
                  Cached input
                </th>
                <th scope="col" class="number">
                  Cache write
                </th>
                <th scope="col" class="number">
                  Output
                </th>
                <th scope="col">Billed each</th>
                <th scope="col">Reasoning effort</th>
                <th scope="col" class="number">
                  Max output tokens
                </th>
                <th scope="col" class="number">
                  Output hold
                </th>
              </tr>
            </thead>
            <tbody>
              {models.data.data.map((model) => (
                <tr key={model.id}>
                  <th scope="row" data-label="Model">
                    <span>
                      <code>{model.id}</code>
                      <span class="muted endpoints">{model.endpoints.join(' · ')}</span>
                    </span>
                  </th>
                  <td data-label="Input" class="number">
                    <Usd value={model.prices_usd_per_million_tokens.input} />
                  </td>
                  <td data-label="Cached input" class="number">
                    <Usd value={model.prices_usd_per_million_tokens.cached_input} />
                  </td>
                  <td data-label="Cache write" class="number">
                    <Usd value={model.prices_usd_per_million_tokens.cache_write} />
                  </td>
                  <td data-label="Output" class="number">
                    <Usd value={model.prices_usd_per_million_tokens.output} />
                  </td>
                  <td data-label="Billed each">{unitPrices(model.unit_prices_usd)}</td>
                  <td data-label="Reasoning effort" class="efforts">{model.reasoning_efforts.length === 0 ? '—' : model.reasoning_efforts.join(', ')}</td>
                  <td data-label="Max output" class="number">{model.max_output_tokens.toLocaleString()}</td>
                  <td data-label="Output hold" class="number">
                    <Usd value={model.output_hold_usd} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </>
  );
}

/** "per image: 1024x1024/high $0.167, …; per audio second $0.0001; per 1M characters $15", or a dash. */
function unitPrices(prices: SelfModel['unit_prices_usd']): string {
  const parts: string[] = [];
  if (prices.per_image !== undefined) parts.push(`per image: ${Object.entries(prices.per_image).map(([tier, usd]) => `${tier} $${usd}`).join(', ')}`);
  if (prices.image_input_per_million !== undefined) parts.push(`image input $${prices.image_input_per_million} per 1M tokens`);
  if (prices.per_audio_second !== undefined) parts.push(`per audio second $${prices.per_audio_second}`);
  if (prices.per_million_characters !== undefined) parts.push(`per 1M characters $${prices.per_million_characters}`);
  return parts.length === 0 ? '—' : parts.join('; ');
}
