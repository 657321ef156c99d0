import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../config/load.js';
import { describeDowngrade, downgradedEfforts, sentBudget } from './effort-budgets.js';

const catalog = (maxOutputTokens: number, efforts: string[] = ['low', 'medium', 'high', 'xhigh', 'max']) =>
  parseConfig(
    {
      providers: [
        { name: 'claude', type: 'anthropic', base_url: 'https://api.anthropic.com/v1' },
        { name: 'google', type: 'gemini', base_url: 'https://generativelanguage.googleapis.com/v1beta' },
        { name: 'openai', type: 'openai', base_url: 'https://api.openai.com/v1' },
      ],
      models: [
        {
          id: 'thinker',
          prices: { input: 1, output: 1 },
          reasoning_efforts: efforts,
          max_output_tokens: maxOutputTokens,
          targets: [{ provider: 'claude', model: 'c' }, { provider: 'google', model: 'g' }, { provider: 'openai', model: 'o' }],
        },
      ],
    },
    'test',
  );

describe('downgraded efforts', () => {
  it('names each effort whose thinking budget the output cap cuts, per Anthropic and Gemini target', () => {
    const found = downgradedEfforts(catalog(8_192));
    expect(found.map((entry) => `${entry.provider}:${entry.effort}:${entry.sent}`)).toEqual([
      // Anthropic keeps 1024 tokens for the answer: 8192 → at most 7168 of thinking.
      'claude:medium:7168',
      'claude:high:7168',
      'claude:xhigh:7168',
      'claude:max:7168',
      // Gemini thinks within three quarters of the cap: 6144.
      'google:medium:6144',
      'google:high:6144',
      'google:xhigh:6144',
      'google:max:6144',
    ]);
    expect(describeDowngrade(found[3]!)).toBe(
      `model thinker: reasoning effort 'max' asks for 65536 thinking tokens on anthropic provider "claude", but max_output_tokens 8192 allows a budget of 7168; set max_output_tokens to at least 66560 for the full budget`,
    );
  });

  it('says when thinking is turned off altogether', () => {
    const [low] = downgradedEfforts(catalog(1_500, ['low']));
    expect(low).toMatchObject({ provider: 'claude', effort: 'low', sent: null });
    expect(describeDowngrade(low!)).toContain('allows no thinking at all');
    expect(sentBudget('anthropic', 'low', 1_500)).toBeNull();
  });

  it('counts Claude on Bedrock with Anthropic’s budgets, and no other Bedrock family', () => {
    const config = parseConfig(
      {
        providers: [{ name: 'aws', type: 'bedrock', region: 'us-east-1' }],
        models: [
          { id: 'claude', prices: { input: 1, output: 1 }, reasoning_efforts: ['high'], max_output_tokens: 8_192, targets: [{ provider: 'aws', model: 'us.anthropic.claude-sonnet-4-20250514-v1:0' }] },
          { id: 'nova', prices: { input: 1, output: 1 }, reasoning_efforts: ['high'], max_output_tokens: 8_192, targets: [{ provider: 'aws', model: 'amazon.nova-pro-v1:0' }] },
        ],
      },
      'test',
    );
    const found = downgradedEfforts(config);
    expect(found.map((entry) => `${entry.model}:${entry.providerType}:${entry.effort}:${entry.sent}`)).toEqual(['claude:bedrock:high:7168']);
    expect(describeDowngrade(found[0]!)).toContain('on bedrock provider "aws"');
  });

  it('finds nothing when the cap leaves room for every budget, or for efforts the model does not allow', () => {
    expect(downgradedEfforts(catalog(66_560))).toEqual([]);
    expect(downgradedEfforts(catalog(8_192, []))).toEqual([]);
  });

  it("counts Vertex AI's Claude and Gemini as Anthropic and Gemini targets", () => {
    const config = parseConfig(
      {
        providers: [
          { name: 'vertex-claude', type: 'vertex', project: 'my-project', location: 'us-east5', publisher: 'anthropic', credentials_file: '/etc/tollgate/sa.json' },
          { name: 'vertex-gemini', type: 'vertex', project: 'my-project', location: 'global', publisher: 'google', credentials_file: '/etc/tollgate/sa.json' },
        ],
        models: [{ id: 'thinker', prices: { input: 1, output: 1 }, reasoning_efforts: ['high'], max_output_tokens: 8_192, targets: [{ provider: 'vertex-claude', model: 'c' }, { provider: 'vertex-gemini', model: 'g' }] }],
      },
      'test',
    );
    expect(downgradedEfforts(config).map((entry) => `${entry.provider}:${entry.providerType}:${entry.sent}`)).toEqual(['vertex-claude:anthropic:7168', 'vertex-gemini:gemini:6144']);
  });
});
