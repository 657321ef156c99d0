// Lint rules, including the import direction of docs/architecture.md:
// http → auth | billing | ratelimit | routing → providers → protocol.
// `protocol` imports nothing of ours; providers never import http, store or billing.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Layers each folder under src/ may NOT import. */
const forbidden = {
  protocol: ['http', 'auth', 'billing', 'ratelimit', 'routing', 'providers', 'store', 'config', 'cli', 'admin', 'lib', 'errors'],
  lib: ['http', 'auth', 'billing', 'ratelimit', 'routing', 'providers', 'store', 'config', 'cli', 'admin'],
  errors: ['http', 'auth', 'billing', 'ratelimit', 'routing', 'providers', 'store', 'config', 'cli', 'admin'],
  providers: ['http', 'auth', 'billing', 'ratelimit', 'routing', 'store', 'cli', 'admin'],
  routing: ['http', 'auth', 'billing', 'ratelimit', 'store', 'cli', 'admin'],
  auth: ['http', 'billing', 'ratelimit', 'routing', 'providers', 'cli'],
  billing: ['http', 'auth', 'ratelimit', 'routing', 'providers', 'cli'],
  ratelimit: ['http', 'auth', 'billing', 'routing', 'providers', 'store', 'cli'],
  store: ['http', 'auth', 'billing', 'ratelimit', 'routing', 'providers', 'cli', 'admin'],
  config: ['http', 'auth', 'billing', 'ratelimit', 'routing', 'providers', 'store', 'cli', 'admin'],
  admin: ['http', 'cli', 'routing', 'providers'],
  http: ['cli'],
};

const layerRules = Object.entries(forbidden).map(([layer, banned]) => ({
  files: [`src/${layer}/**/*.ts`],
  ignores: ['src/**/*.test.ts'],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: banned.map((target) => ({
          group: [`**/${target}/**`, `../${target}`, `../../${target}`],
          message: `src/${layer} must not import src/${target} (see docs/architecture.md, import direction).`,
        })),
      },
    ],
  },
}));

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'data/**', '.tollgate-cache/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', URL: 'readonly' } },
  },
  ...layerRules,
);
