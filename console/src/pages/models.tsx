/**
 * The models the key may use now, with the endpoints each serves, their prices per million tokens
 * and what they bill each (per image, per second of audio, per million characters), from
 * /console/api/self/models.
 */
import { api } from '../api';
import { PageHeading } from '../components/heading';
import { ErrorNotice, Loading } from '../components/notice';
import { TableWrap } from '../components/table-wrap';
import { Usd } from '../components/usd';
import type { SelfModel } from '../types';
import { useLoad } from '../use-load';

export function ModelsPage() {
  const models = useLoad(() => api.selfModels(), []);
  return (
    <>
      <PageHeading title="Models" />
      <p class="help">Prices in US dollars per million tokens, unless the column says otherwise. Reasoning tokens count as output.</p>
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
                  <td data-label="Reasoning effort">{model.reasoning_efforts.length === 0 ? '—' : model.reasoning_efforts.join(', ')}</td>
                  <td data-label="Max output" class="number">{model.max_output_tokens.toLocaleString()}</td>
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
