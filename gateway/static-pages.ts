// The chat page's files (gateway/public/), served as they are with a Content-Security-Policy that lets the page load
// only its own script, style and API.
import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import path from 'node:path';

const PUBLIC_DIR = path.join(__dirname, 'public');
const STATIC_FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/chat.js': { file: 'chat.js', type: 'text/javascript; charset=utf-8' },
  '/chat.css': { file: 'chat.css', type: 'text/css; charset=utf-8' },
};
/**
 * The chat page (gateway/public/): its own script (no inline script or style, no eval), its own style sheet, fetch to
 * its own API; no plugins, no framing, no <base>, forms only to itself (chat.js handles them without navigating).
 */
const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export interface StaticPage {
  file: string;
  type: string;
}

/** The page served at `pathname`, if any. */
export function staticPage(pathname: string): StaticPage | undefined {
  return Object.hasOwn(STATIC_FILES, pathname) ? STATIC_FILES[pathname] : undefined;
}

export async function sendPage(res: ServerResponse, page: StaticPage): Promise<void> {
  const body = await readFile(path.join(PUBLIC_DIR, page.file));
  res.writeHead(200, {
    'content-type': page.type,
    'cache-control': 'no-cache',
    'content-security-policy': PAGE_CSP,
  });
  res.end(body);
}
