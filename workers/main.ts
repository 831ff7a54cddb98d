// This repository's worker process (`npm run worker`, the Docker image): the demo tools, configured by environment
// (workers/config.ts). `--check` validates the configuration and exits without connecting. A service that installs
// the package writes the same three lines with its own tools.
// Stays: this repository's own worker (the Docker image's command, left out of the package) runs the demo's tools.
import { demoTools } from '../testing/demo-tools';
import { ConfigError } from './config';
import { runWorker } from './run-worker';

runWorker({ tools: demoTools, checkOnly: process.argv.includes('--check') }).catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
