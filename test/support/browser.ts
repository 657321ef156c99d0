/**
 * A real browser for the console tests: Debian's Chromium (`apt-get install chromium`; .ci/run
 * installs it) driven by playwright-core, which downloads no browser of its own. Without the
 * binary the browser suites skip with a message, except under CI=true, where they must run.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';

export const CHROMIUM_PATH = process.env.TOLLGATE_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** Why the browser suites cannot run here, or null when they can. Throws under CI, where they must. */
export function browserMissing(): string | null {
  if (existsSync(CHROMIUM_PATH)) return null;
  const reason = `Console browser tests skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set TOLLGATE_TEST_CHROMIUM).`;
  if (process.env.CI === 'true') throw new Error(`${reason} Under CI they must run.`);
  console.warn(reason);
  return reason;
}

export async function launchBrowser(): Promise<Browser> {
  // Chromium's sandbox cannot start as root (CI and these machines run as root).
  const rootless = process.getuid?.() !== 0;
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: rootless ? [] : ['--no-sandbox'] });
}

export const SCREEN_SIZES = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'desktop', width: 1440, height: 900 },
] as const;

export const SCREENSHOT_FOLDER = join(process.cwd(), 'test-results', 'console');

/**
 * A browser context as a person's: a time zone other than UTC (so local times and their UTC
 * titles differ), clipboard allowed for the copy buttons, and every page's Content-Security-Policy
 * violations and script errors collected for the test to check.
 */
export async function newConsoleContext(browser: Browser, baseUrl: string): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({
    baseURL: baseUrl,
    timezoneId: 'America/New_York',
    locale: 'en-US',
    viewport: { width: SCREEN_SIZES[1].width, height: SCREEN_SIZES[1].height },
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  // A missing element fails its test in seconds, not at the test's time limit (even on a busy machine).
  context.setDefaultTimeout(10_000);
  const problems: string[] = [];
  const page = await context.newPage();
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) problems.push(`console error: ${message.text()}`);
    if (/Content Security Policy/i.test(message.text())) problems.push(`CSP: ${message.text()}`);
  });
  return { context, page, problems };
}

/** Signs in on the console's sign-in page with an admin token and waits for the overview it lands on. */
export async function signInToConsole(page: Page, token: string): Promise<void> {
  await page.goto('/console/');
  await page.getByLabel('Admin token or API key').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  // Not `eventually`: this also runs in a suite's beforeAll, where expect.poll cannot.
  await page.getByRole('heading', { level: 1, name: 'Overview', exact: true }).waitFor();
}

/** A browser with one console page (see newConsoleContext); `close` ends both. */
export interface OpenConsole {
  page: Page;
  /** Script errors and Content-Security-Policy violations seen so far. */
  problems: string[];
  close(): Promise<void>;
}

/**
 * Launches Chromium with a page on the gateway at `gateway.baseUrl` and signs in with `token`;
 * without a token the page has opened nothing yet, for a test whose subject is the sign-in itself.
 */
export async function openConsole(gateway: { baseUrl: string }, token?: string): Promise<OpenConsole> {
  const browser = await launchBrowser();
  try {
    const { context, page, problems } = await newConsoleContext(browser, gateway.baseUrl);
    if (token !== undefined) await signInToConsole(page, token);
    return {
      page,
      problems,
      close: async () => {
        await context.close();
        await browser.close();
      },
    };
  } catch (error) {
    // A sign-in that fails leaves no browser behind.
    await browser.close();
    throw error;
  }
}

/** Full-page screenshots of the current page at a phone's and a desktop's size, under test-results/console/. */
export async function screenshots(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_FOLDER, { recursive: true });
  const original = page.viewportSize();
  for (const size of SCREEN_SIZES) {
    await page.setViewportSize({ width: size.width, height: size.height });
    await page.screenshot({ path: join(SCREENSHOT_FOLDER, `${name}-${size.name}.png`), fullPage: true, animations: 'disabled' });
  }
  if (original !== null) await page.setViewportSize(original);
}

/** The value of the figure labelled `label` (a `.stat` of the console's pages). */
export async function statValue(page: Page, label: string): Promise<string | null> {
  return page.locator('.stat').filter({ has: page.locator('dt', { hasText: new RegExp(`^${label}$`) }) }).locator('dd').textContent();
}

/**
 * `expect.poll` with room for a busy machine (the whole suite runs beside the browser): what a
 * page shows after a request may take more than vitest's default second to appear.
 */
export function eventually<T>(read: () => T | Promise<T>) {
  return expect.poll(read, { timeout: 10_000, interval: 50 });
}
