// Lint rules, including the import direction of docs/architecture.md:
// server → http → auth | billing | ratelimit | routing → providers → protocol.
// `protocol` imports nothing of ours; providers never import http, store or billing; only cli
// imports server (the process runtime). `request-log` (the /v1 request log: rows, writer,
// retention) sits beside http: http and server use it, it uses store, config, lib and errors.
// `observability` (metrics, the request's outcome, the tracer interface, the hook that records
// them) likewise: http, server and request-log use it; it uses routing and ratelimit types,
// protocol, lib and errors, never http.
import { readFileSync } from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Layers each folder under src/ may NOT import: import-layers.json, which the import-layer test reads too. */
const { forbidden } = JSON.parse(readFileSync(new URL('./import-layers.json', import.meta.url), 'utf8'));

const layerRules = Object.entries(forbidden).map(([layer, banned]) => ({
  files: [`src/${layer}/**/*.ts`, 'server'],
  ignores: ['src/**/*.test.ts', 'server'],
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
