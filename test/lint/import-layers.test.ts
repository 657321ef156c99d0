/**
 * No upward arrow in the import graph of src/ (docs/architecture.md, import direction): every
 * import of every source file, type-only ones included, checked against the layer table that the
 * lint rule uses too (import-layers.json), and against the rules inside a layer that a lint pattern
 * cannot see (which folder of http/ may import which). The lint rule flags an import as it is
 * written; this test proves the whole tree keeps the rule, in `npm test`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importGraph, root, sourceFiles, sourceRoot } from './import-graph.js';

const { forbidden } = JSON.parse(readFileSync(join(root, 'import-layers.json'), 'utf8')) as { forbidden: Record<string, string[]> };

/**
 * Inside a layer: a folder (a path under src/, or one file) and the folders it may not import.
 * `except` names files of the folder that may (the one place that wires the others together).
 */
interface InnerRule {
  from: string;
  mayNotImport: string[];
  except?: string[];
  /** Files of the banned folders that may still be imported, each named on purpose. */
  allow?: string[];
}

const surfaceFolders = readdirSync(join(sourceRoot, 'http/v1/surfaces'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => `http/v1/surfaces/${entry.name}`);
const plugins = ['http/v1', 'http/admin', 'http/console', 'http/ops'];
const edgeFiles = readdirSync(join(sourceRoot, 'http'), { withFileTypes: true })
  .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && entry.name !== 'app.ts')
  .map((entry) => `http/${entry.name}`);

const innerRules: InnerRule[] = [
  // The edge (http/'s own files) knows no plugin; app.ts registers them.
  ...edgeFiles.map((file) => ({ from: file, mayNotImport: plugins })),
  // Session handling is shared by the admin API and the console; neither imports the other's folder for it.
  { from: 'http/session', mayNotImport: plugins },
  { from: 'http/admin', mayNotImport: ['http/console', 'http/v1', 'http/ops'] },
  { from: 'http/ops', mayNotImport: ['http/console', 'http/v1'] },
  // The console's key-holder routes authenticate with an API key as /v1 does, list the key's models
  // as /v1 does, page the request log as the admin API does, and know which listener a request came through.
  {
    from: 'http/console',
    mayNotImport: ['http/admin', 'http/v1', 'http/ops'],
    allow: ['http/v1/api-hooks.ts', 'http/v1/models-route.ts', 'http/admin/cursor.ts', 'http/admin/admin-listener.ts'],
  },
  { from: 'http/v1', mayNotImport: ['http/admin', 'http/console', 'http/ops'] },
  // The shared answer path knows no surface by name: only the registration (v1-routes.ts) names them,
  // and no surface imports another.
  { from: 'http/v1', mayNotImport: surfaceFolders, except: ['http/v1/v1-routes.ts'] },
];

/** `a/b/c.ts` is in `a`, `a/b` and `a/b/c.ts`. */
function isIn(path: string, folder: string): boolean {
  return path === folder || path.startsWith(`${folder}/`);
}

/** Every import of `graph` (paths relative to src/, with `/`) that runs against the layer table or an inner rule. */
export function upwardArrows(graph: Map<string, string[]>, layers: Record<string, string[]>, inner: InnerRule[]): string[] {
  const found: string[] = [];
  for (const [file, targets] of graph) {
    if (file.endsWith('.test.ts')) continue;
    const layer = file.split('/')[0]!;
    for (const target of targets) {
      const targetLayer = target.split('/')[0]!;
      if (targetLayer !== layer && (layers[layer] ?? []).includes(targetLayer)) found.push(`${file} → ${target} (${layer} may not import ${targetLayer})`);
      for (const rule of inner) {
        if (!isIn(file, rule.from) || (rule.except ?? []).some((allowed) => isIn(file, allowed))) continue;
        if ((rule.allow ?? []).includes(target)) continue;
        const banned = rule.mayNotImport.find((folder) => isIn(target, folder) && !isIn(file, folder));
        if (banned !== undefined) found.push(`${file} → ${target} (${rule.from} may not import ${banned})`);
      }
    }
  }
  return found.sort();
}

describe('import layers', () => {
  it('finds an upward arrow when there is one (the check itself works)', () => {
    const graph = new Map([
      ['protocol/a.ts', ['lib/b.ts']],
      ['http/x.ts', ['routing/y.ts']],
      ['http/admin/z.ts', ['http/console/w.ts', 'http/session/s.ts']],
      ['protocol/a.test.ts', ['store/q.ts']],
    ]);
    expect(upwardArrows(graph, { protocol: ['lib'], http: ['server'] }, [{ from: 'http/admin', mayNotImport: ['http/console'] }])).toEqual([
      'http/admin/z.ts → http/console/w.ts (http/admin may not import http/console)',
      'protocol/a.ts → lib/b.ts (protocol may not import lib)',
    ]);
  });

  it('src/ has none, type-only imports included', () => {
    const files = sourceFiles(sourceRoot);
    const name = (file: string): string => relative(sourceRoot, file).split(sep).join('/');
    const graph = new Map([...importGraph(files)].map(([file, targets]) => [name(file), targets.map(name)]));
    expect(graph.size).toBeGreaterThan(100);
    // Every folder directly under src/ has a row in the table, so that a new layer is placed on purpose.
    const layers = new Set([...graph.keys()].map((file) => file.split('/')[0]!));
    expect([...layers].filter((layer) => !(layer in forbidden))).toEqual([]);
    expect(surfaceFolders.length).toBeGreaterThanOrEqual(3);
    const arrows = upwardArrows(graph, forbidden, innerRules);
    expect(arrows, `imports against docs/architecture.md's direction:\n  ${arrows.join('\n  ')}`).toEqual([]);
  });

  it('billing depends on the money port of the store only', () => {
    const billing = sourceFiles(join(sourceRoot, 'billing')).filter((file) => !file.endsWith('.test.ts'));
    expect(billing.length).toBeGreaterThan(3);
    const otherPorts = billing.flatMap((file) => {
      const imports = readFileSync(file, 'utf8').match(/import[^;]*from '[./]*store\/[^']*';/g) ?? [];
      return imports.filter((line) => /\b(Store|AccountStore|OperationsStore)\b/.test(line)).map((line) => `${relative(sourceRoot, file)}: ${line}`);
    });
    expect(otherPorts).toEqual([]);
    expect(billing.some((file) => /\bMoneyStore\b/.test(readFileSync(file, 'utf8')))).toBe(true);
  });
});
