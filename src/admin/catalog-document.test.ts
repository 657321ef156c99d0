import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/gateway-error.js';
import { Sealer } from '../lib/seal.js';
import { acceptDocument, diffCatalogs, openSecrets, servedCatalog, storedKeyEnv } from './catalog-document.js';

const model = (id: string, input = '1') => ({ id, prices: { input, output: '2' }, targets: [{ provider: 'up', model: id }] });
const document = (provider: Record<string, unknown>, models: Array<Record<string, unknown>> = [model('a')]) => ({ providers: [{ name: 'up', type: 'openai', base_url: 'https://upstream.test/v1', ...provider }], models });

function refusal(run: () => unknown): { status: number; param: string | undefined; message: string } {
  try {
    run();
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    return { status: error.status, param: error.param ?? undefined, message: error.message };
  }
  throw new Error('not refused');
}

describe('the catalog document', () => {
  const sealer = Sealer.withRandomKey();

  it('seals an api_key, keeps only the marker, and hands the secret to its provider under its own variable', () => {
    const accepted = acceptDocument(document({ api_key: 'sk-secret' }), null, sealer);
    expect(JSON.stringify(accepted.document)).not.toContain('sk-secret');
    expect(accepted.document.providers).toEqual([expect.objectContaining({ api_key: '[stored]' })]);
    expect(accepted.catalog.providers[0]).toMatchObject({ api_key_env: storedKeyEnv('up') });
    expect(openSecrets(accepted.secrets, sealer)).toEqual({ [storedKeyEnv('up')]: 'sk-secret' });
    expect(servedCatalog(accepted.document, accepted.secrets).providers[0]).toMatchObject({ api_key_env: storedKeyEnv('up') });
    // "[stored]" keeps it; a new value replaces it.
    expect(acceptDocument(accepted.document, accepted.secrets, sealer).secrets).toEqual(accepted.secrets);
    expect(openSecrets(acceptDocument(document({ api_key: 'sk-next' }), accepted.secrets, sealer).secrets, sealer)).toEqual({ [storedKeyEnv('up')]: 'sk-next' });
  });

  it('refuses what it cannot store, naming the field', () => {
    expect(refusal(() => acceptDocument(document({ api_key: '[stored]' }), null, sealer))).toMatchObject({ status: 400, param: 'providers[0].api_key' });
    expect(refusal(() => acceptDocument(document({ api_key: 'sk', api_key_env: 'KEY' }), null, sealer))).toMatchObject({ status: 400, param: 'providers[0].api_key' });
    expect(refusal(() => acceptDocument({ providers: [{ name: 'up', type: 'simulated', api_key: 'sk' }], models: [model('a')] }, null, sealer))).toMatchObject({ status: 400, param: 'providers[0].api_key' });
    expect(refusal(() => acceptDocument(document({ api_key: 'sk' }), null, undefined))).toMatchObject({ status: 409, message: expect.stringContaining('TOLLGATE_SECRETS_KEY') as unknown });
    expect(refusal(() => acceptDocument(document({}, [model('a', '-1')]), null, sealer))).toMatchObject({ status: 400, param: 'models[0].prices.input' });
    expect(refusal(() => acceptDocument(document({}, [model('a'), model('a')]), null, sealer))).toMatchObject({ status: 400, param: 'models[1].id' });
    expect(refusal(() => acceptDocument('not a document', null, sealer))).toMatchObject({ status: 400 });
  });

  it('lists what changed: names added, removed and changed, and prices', () => {
    const before = document({}, [model('a'), model('b'), model('c')]);
    const after = { ...document({ base_url: 'https://elsewhere.test/v1' }, [model('a', '3'), { ...model('b'), enabled: false }, model('d')]), providers: [...document({}).providers.map((provider) => ({ ...provider, base_url: 'https://elsewhere.test/v1' })), { name: 'new', type: 'simulated' }] };
    expect(diffCatalogs(before, after)).toEqual({
      providers: { added: ['new'], removed: [], changed: ['up'] },
      models: { added: ['d'], removed: ['c'], changed: ['a', 'b'] },
      prices_changed: ['a'],
    });
    expect(diffCatalogs(undefined, before).models.added).toEqual(['a', 'b', 'c']);
  });
});
