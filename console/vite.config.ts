// Builds the web console (console/src, Preact) into dist/console, which the gateway serves at
// /console (src/http/console/static-files.ts). Run by `npm run build`; no dev server is needed.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  publicDir: false,
  // Preact's JSX runtime, through Vite's own transformer (no Babel).
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // Nothing inline, so the Content-Security-Policy can forbid inline scripts and styles.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
  logLevel: 'warn',
});
