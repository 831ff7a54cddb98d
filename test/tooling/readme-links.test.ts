// The README ships in the tarball: every link in it, and in the documents it links to, leads somewhere there — a
// file the package packs, or a heading of the document — so a reader of an installed package meets no dead link.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { test } from 'node:test';

const ROOT = path.resolve(__dirname, '..', '..');

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

test('every relative link of the README (and of what it links to) names a file the package packs, and a heading in it', async () => {
  const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: ROOT,
  });
  const packed = new Set((JSON.parse(stdout) as { files: { path: string }[] }[])[0]!.files.map((file) => file.path));
  const seen = new Set<string>();
  const dead: string[] = [];
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target!)) continue; // https:, mailto:
      const [where, anchor] = target!.split('#');
      const linked = where ? path.posix.normalize(path.posix.join(path.posix.dirname(file), where)) : file;
      if (!packed.has(linked)) {
        dead.push(`${file}: ${target} (${linked} is not packed)`);
        continue;
      }
      if (!linked.endsWith('.md')) continue;
      if (anchor) {
        const headings = [...fs.readFileSync(path.join(ROOT, linked), 'utf8').matchAll(/^#+ (.+)$/gm)];
        if (!headings.some(([, heading]) => anchorOf(heading!) === anchor))
          dead.push(`${file}: ${target} (no heading)`);
      }
      visit(linked);
    }
  };
  visit('README.md');
  assert.deepEqual(dead, []);
  assert.ok(seen.size > 1, 'the README links to other documents');
});
