import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { DEMO_CATALOG } from './demo-catalog.js';
import { configFileSchema, type ConfigFile } from './schema.js';

/** A config file that cannot be used; the message names the file and every bad field. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** `models[0].prices.input` from a zod issue path. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? String(segment) : `.${String(segment)}`;
  }
  return out;
}

function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const where = formatPath(issue.path);
      return where === '' ? `- ${issue.message}` : `- ${where}: ${issue.message}`;
    })
    .join('\n');
}

/** Validates a parsed catalog, checks its cross references, and freezes it. */
export function parseConfig(raw: unknown, source = 'config'): ConfigFile {
  const result = configFileSchema.safeParse(raw);
  if (!result.success) throw new ConfigError(`${source} is not valid:\n${describeIssues(result.error.issues)}`);
  const config = result.data;
  const problems = catalogProblems(config).map((problem) => `- ${problem.path}: ${problem.message}`);
  // The outbox names a webhook by its URL (alerts/alert-events.ts): one entry per URL.
  const webhookUrls = new Set<string>();
  config.alerts.webhooks.forEach((webhook, index) => {
    if (webhookUrls.has(webhook.url)) problems.push(`- alerts.webhooks[${index}].url: duplicate webhook URL (list every event it wants in one entry)`);
    webhookUrls.add(webhook.url);
  });
  if (problems.length > 0) throw new ConfigError(`${source} is not valid:\n${problems.join('\n')}`);
  return deepFreeze(config);
}

/** What the schema cannot see in a catalog: repeated names and targets naming no provider. */
export function catalogProblems(catalog: Pick<ConfigFile, 'providers' | 'models'>): { path: string; message: string }[] {
  const problems: { path: string; message: string }[] = [];
  const providerNames = new Set<string>();
  catalog.providers.forEach((provider, index) => {
    if (providerNames.has(provider.name)) problems.push({ path: `providers[${index}].name`, message: `duplicate provider name "${provider.name}"` });
    providerNames.add(provider.name);
  });
  const modelIds = new Set<string>();
  catalog.models.forEach((model, index) => {
    if (modelIds.has(model.id)) problems.push({ path: `models[${index}].id`, message: `duplicate model id "${model.id}"` });
    modelIds.add(model.id);
    model.targets.forEach((target, targetIndex) => {
      if (!providerNames.has(target.provider)) problems.push({ path: `models[${index}].targets[${targetIndex}].provider`, message: `no provider named "${target.provider}"` });
    });
  });
  return problems;
}

/** Loads the catalog from a YAML file, or the built-in demo catalog when no path is given. */
export function loadConfig(path: string | undefined): ConfigFile {
  if (path === undefined || path === '') return parseConfig(DEMO_CATALOG, 'built-in demo catalog');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`cannot read config file ${path}: ${(error as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    throw new ConfigError(`config file ${path} is not valid YAML: ${(error as Error).message}`);
  }
  return parseConfig(raw, `config file ${path}`);
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value as Record<string, unknown>)) deepFreeze(child);
  }
  return value;
}
