// Headless Chromium for the Web UI test: the system's Chromium (Debian's `chromium` package; .ci/run installs it)
// driven by playwright-core. Nothing is downloaded: when no Chromium can be found the test fails and says why.
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';

/** Where screenshots go (test-artifacts/ is gitignored). */
export const ARTIFACTS_DIR = path.resolve(__dirname, '..', '..', 'test-artifacts', 'web-ui');

const EXECUTABLE_NAMES = ['chromium', 'chromium-browser'];

function isExecutableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** CHROMIUM_PATH if set (it must be an executable file), else `chromium` or `chromium-browser` on PATH; throws otherwise. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.CHROMIUM_PATH?.trim();
  if (configured) {
    if (!isExecutableFile(configured)) {
      throw new Error(`CHROMIUM_PATH=${configured} is not an executable file. Point it at a Chromium binary or unset it.`);
    }
    return configured;
  }
  const dirs = (env.PATH ?? '').split(path.delimiter).filter(Boolean);
  for (const name of EXECUTABLE_NAMES) {
    for (const dir of dirs) {
      const candidate = path.join(dir, name);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  throw new Error(
    'Chromium not found: the Web UI test needs a system Chromium (no browser is downloaded). CHROMIUM_PATH is not set ' +
      `and neither ${EXECUTABLE_NAMES.join(' nor ')} is on PATH. Install Debian's package ` +
      '(`apt-get update && apt-get install -y chromium`, as .ci/run does) or set CHROMIUM_PATH.',
  );
}

export async function launchChromium(): Promise<Browser> {
  const executablePath = findChromium();
  try {
    return await chromium.launch({
      executablePath,
      headless: true,
      timeout: 60_000,
      // /dev/shm is small in containers; no GPU here.
      args: ['--disable-dev-shm-usage', '--disable-gpu'],
    });
  } catch (error) {
    throw new Error(`Could not launch Chromium at ${executablePath}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** A fresh context with a tall viewport (the UI scrolls inside its own container, so screenshots show the viewport). */
export async function newPage(browser: Browser): Promise<{ context: BrowserContext; page: Page; pageErrors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1600, height: 2000 }, timezoneId: 'UTC', locale: 'en-US' });
  const page = await context.newPage();
  // The UI can be slow on a small machine; every wait is for an element or text, never a fixed sleep.
  page.setDefaultTimeout(30_000);
  page.setDefaultNavigationTimeout(45_000);
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  return { context, page, pageErrors };
}

/** Saves a screenshot of the page (viewport) or of one element under test-artifacts/web-ui/ and returns its path. */
export async function saveScreenshot(target: Page | Locator, name: string): Promise<string> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const file = path.join(ARTIFACTS_DIR, `${name}.png`);
  await target.screenshot({ path: file, animations: 'disabled', timeout: 30_000 });
  return file;
}

/** innerText with runs of whitespace collapsed to one space. */
export function squash(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
