/** The models the key may use now, with their prices per million tokens (from /console/api/self/models). */
import { api } from '../api';
import { PageHeading } from '../components/heading';
import { ErrorNotice, Loading } from '../components/notice';
import { TableWrap } from '../components/table-wrap';
import { Usd } from '../components/usd';
import { useLoad } from '../use-load';

export function ModelsPage() {
  const models = useLoad(() => api.selfModels(), []);
  return (
    <>
      <PageHeading title="Models" />
      <p class="help">Prices in US dollars per million tokens. Reasoning tokens count as output.</p>
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
                    <code>{model.id}</code>
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
