// Headless Chromium for browser tests, driven by playwright-core. Which Chromium, in order:
//   1. CHROMIUM_PATH, if set (it must be an executable file);
//   2. on Linux x64, the build shipped inside the npm package @sparticuz/chromium (a devDependency, so `npm ci` brings
//      it): the same browser on every machine, nothing to install by hand;
//   3. elsewhere, `chromium` or `chromium-browser` on PATH.
// The package's Chromium is brotli-compressed; it is unpacked once (~200 MB, a second or two) into
// ${XDG_CACHE_HOME:-~/.cache}/claude-temporal-orchestrator/chromium/<package version>/ — in a staging folder renamed
// into place, so a half-unpacked browser is never used and concurrent callers do not trip over each other.
import { execFile } from 'node:child_process';
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import { cacheRoot } from '../../testing/temporal-cli';

/** Where screenshots go (test-artifacts/ is gitignored). */
export const ARTIFACTS_DIR = path.resolve(__dirname, '..', '..', 'test-artifacts', 'web-ui');

const EXECUTABLE_NAMES = ['chromium', 'chromium-browser'];
const PACKAGE = '@sparticuz/chromium';

function isExecutableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The package's Chromium is an x86-64 Linux build. */
export function packagedChromiumRuns(platform: string = process.platform, arch: string = process.arch): boolean {
  return platform === 'linux' && arch === 'x64';
}

function onPath(env: NodeJS.ProcessEnv): string | undefined {
  const dirs = (env.PATH ?? '').split(path.delimiter).filter(Boolean);
  for (const name of EXECUTABLE_NAMES) {
    for (const dir of dirs) {
      const candidate = path.join(dir, name);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return undefined;
}

/** Runs the package's own unpacker with TMPDIR pointed at `dir` (it unpacks into os.tmpdir()); resolves the binary. */
function unpackInto(dir: string, entry: string, binDir: string): Promise<string> {
  const script =
    'import(process.argv[1]).then((m) => m.default.executablePath(process.argv[2]))' +
    '.then((file) => process.stdout.write(file), (error) => { console.error(error); process.exit(1); });';
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['-e', script, pathToFileURL(entry).href, binDir],
      { env: { ...process.env, TMPDIR: dir }, timeout: 120_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`Unpacking ${PACKAGE} failed: ${stderr.trim() || error.message}`));
        else resolve(stdout.trim());
      },
    );
  });
}

/** The Chromium shipped in @sparticuz/chromium, unpacked into the cache on first use; returns its path. */
export async function packagedChromium(): Promise<string> {
  let entry: string;
  try {
    entry = require.resolve(PACKAGE);
  } catch {
    throw new Error(`${PACKAGE} is not installed: run \`npm ci\` (it is one of the devDependencies).`);
  }
  const packageDir = path.resolve(path.dirname(entry), '..');
  const { version } = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as { version: string };
  const parent = path.join(cacheRoot(), 'chromium');
  const target = path.join(parent, version);
  const binary = path.join(target, 'chromium');
  if (isExecutableFile(binary)) return binary;

  mkdirSync(parent, { recursive: true });
  const staging = mkdtempSync(path.join(parent, `.${version}-`));
  try {
    const unpacked = await unpackInto(staging, entry, path.join(packageDir, 'bin'));
    if (unpacked !== path.join(staging, 'chromium')) {
      throw new Error(`${PACKAGE} unpacked Chromium to ${unpacked}, not into ${staging}`);
    }
    try {
      renameSync(staging, target);
    } catch (error) {
      // Someone else finished first: theirs is complete (it was renamed into place whole), use it.
      if (!existsSync(binary)) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return binary;
}

/**
 * CHROMIUM_PATH if set (it must be an executable file); else the packaged Chromium where it runs (Linux x64); else
 * `chromium` or `chromium-browser` on PATH. Throws with what to do when there is none.
 */
export async function findChromium(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const configured = env.CHROMIUM_PATH?.trim();
  if (configured) {
    if (!isExecutableFile(configured)) {
      throw new Error(
        `CHROMIUM_PATH=${configured} is not an executable file. Point it at a Chromium binary or unset it.`,
      );
    }
    return configured;
  }
  if (packagedChromiumRuns()) return packagedChromium();
  const found = onPath(env);
  if (found) return found;
  throw new Error(
    `Chromium not found: ${PACKAGE} ships a build for Linux x64 only (this is ${process.platform}-${process.arch}), ` +
      `CHROMIUM_PATH is not set and neither ${EXECUTABLE_NAMES.join(' nor ')} is on PATH. ` +
      'Install Chromium or set CHROMIUM_PATH.',
  );
}

export async function launchChromium(): Promise<Browser> {
  const executablePath = await findChromium();
  try {
    return await chromium.launch({
      executablePath,
      headless: true,
      timeout: 60_000,
      // /dev/shm is small in containers; no GPU here.
      args: ['--disable-dev-shm-usage', '--disable-gpu'],
    });
  } catch (error) {
    throw new Error(
      `Could not launch Chromium at ${executablePath}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** A fresh context with a tall viewport (the UI scrolls inside its own container, so screenshots show the viewport). */
export async function newPage(
  browser: Browser,
): Promise<{ context: BrowserContext; page: Page; pageErrors: string[] }> {
  const context = await browser.newContext({
    viewport: { width: 1600, height: 2000 },
    timezoneId: 'UTC',
    locale: 'en-US',
  });
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
