// The package's version, for the commands' `--version`: read from its package.json, found from this file's folder up
// (client/ in a checkout, dist/client/ once built), so it is the version that is installed.
import fs from 'node:fs';
import path from 'node:path';

const PACKAGE_NAME = 'claude-temporal-orchestrator';

export function packageVersion(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const json = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (json.name === PACKAGE_NAME && json.version) return json.version;
    }
    if (path.dirname(dir) === dir) throw new Error(`No package.json of ${PACKAGE_NAME} above ${__dirname}`);
  }
}
