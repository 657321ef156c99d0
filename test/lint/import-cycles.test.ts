/**
 * No import cycles in src/ (docs/architecture.md, import direction): the graph of relative
 * imports between src/**\/*.ts files, type-only imports included, has no strongly connected
 * component of more than one file, and no file imports itself.
 */
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importGraph, root, sourceFiles, sourceRoot } from './import-graph.js';

/** Tarjan's strongly connected components, iteratively (no recursion depth to worry about). */
function stronglyConnected(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; edge: number }> = [{ node: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const edges = graph.get(frame.node) ?? [];
      if (frame.edge < edges.length) {
        const target = edges[frame.edge++]!;
        if (!index.has(target)) {
          index.set(target, next);
          low.set(target, next++);
          stack.push(target);
          onStack.add(target);
          work.push({ node: target, edge: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(target)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        components.push(component);
      }
    }
  }
  return components;
}

/** One shortest cycle through a component's first file, to print: a → b → … → a. */
function cycleThrough(graph: Map<string, string[]>, component: string[]): string[] {
  const members = new Set(component);
  const start = [...component].sort()[0]!;
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const target of graph.get(node) ?? []) {
      if (!members.has(target)) continue;
      if (target === start) {
        const path = [node];
        while (path[0] !== start) path.unshift(previous.get(path[0]!)!);
        return [...path, start];
      }
      if (!previous.has(target)) {
        previous.set(target, node);
        queue.push(target);
      }
    }
  }
  return [start, start];
}

describe('import cycles', () => {
  it('finds a cycle when there is one (the check itself works)', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
      ['e', ['e']],
    ]);
    const cycles = stronglyConnected(graph).filter((component) => component.length > 1);
    expect(cycles.map((component) => [...component].sort())).toEqual([['a', 'b', 'c']]);
    expect(cycleThrough(graph, ['a', 'b', 'c'])).toEqual(['a', 'b', 'c', 'a']);
  });

  it('src/ has none, type-only imports included', () => {
    const files = sourceFiles(sourceRoot);
    const graph = importGraph(files);
    expect(graph.size).toBeGreaterThan(100);
    const name = (file: string): string => relative(root, file);
    const cycles = stronglyConnected(graph)
      .filter((component) => component.length > 1 || (graph.get(component[0]!) ?? []).includes(component[0]!))
      .map((component) => {
        const files = component.map(name).sort();
        const example = cycleThrough(graph, component).map(name).join(' → ');
        return `${files.length} files: ${files.join(', ')}\n    e.g. ${example}`;
      })
      .sort();
    expect(cycles, `import cycles in src/ (see docs/architecture.md):\n  ${cycles.join('\n  ')}`).toEqual([]);
  });
});
