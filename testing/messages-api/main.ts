#!/usr/bin/env node
// The local Messages API server as a command: `claude-temporal-orchestrator-messages-api` (the package's bin), `npm run
// messages-api` here. Runs until SIGINT/SIGTERM; USAGE below is what `--help` prints. A flag wins over its variable.
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { packageVersion } from '../../client/package-version';
import { type RateLimits, rateLimitsSchema } from './rate-limits';
import { asScriptSteps, scriptFileSchema, scriptProblems } from './script-schema';
import { startMessagesApi } from './server';
import type { ScriptStep } from './types';

const USAGE = `usage: claude-temporal-orchestrator-messages-api [options]

The local Messages API server: POST /v1/messages as the Anthropic API speaks it (JSON and SSE), with a deterministic
demo model and replies scripted per conversation. Point a worker at it: ANTHROPIC_BASE_URL=<the URL it prints>.

  --port N              MESSAGES_API_PORT            port (default 0: a free one; the URL is printed)
  --host H              MESSAGES_API_HOST            interface (default 127.0.0.1)
  --script-file F       MESSAGES_API_SCRIPT_FILE     a JSON file of scripts {"<match>": [steps…]}; more while it runs:
                                                     POST /_test/scripts {"match", "steps"}
  --latency-ms N        MESSAGES_API_LATENCY_MS      added before every answer (default 0)
  --token-delay-ms N    MESSAGES_API_TOKEN_DELAY_MS  stream replies a token at a time, N ms apart (default 0)
  --context-window N    MESSAGES_API_CONTEXT_WINDOW  the model's context window in input tokens (default 1,000,000)
  --batch-delay-ms N    MESSAGES_API_BATCH_DELAY_MS  a Message Batch stays in_progress at least N ms (default 200)
  --rate-limits JSON    MESSAGES_API_RATE_LIMITS     per-minute limits per model, each optional (default none):
                                                     {"requestsPerMinute": n, "inputTokensPerMinute": n,
                                                      "outputTokensPerMinute": n}; while it runs:
                                                     POST /_test/rate-limits with the same JSON (null: none)
  --help, --version`;

/** Exits 2 with the problem and the usage: what was asked cannot run. */
function refuse(problem: string): never {
  console.error(`${problem}\n\n${USAGE}`);
  process.exit(2);
}

function commandLine() {
  try {
    return parseArgs({
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        'script-file': { type: 'string' },
        'latency-ms': { type: 'string' },
        'batch-delay-ms': { type: 'string' },
        'token-delay-ms': { type: 'string' },
        'context-window': { type: 'string' },
        'rate-limits': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean' },
      },
    }).values;
  } catch (error) {
    return refuse((error as Error).message);
  }
}

/** A flag's value, else its variable's, as a non-negative integer. */
function nonNegativeInteger(flag: string | undefined, name: string, fallback: number): number {
  const raw = flag ?? process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0)
    refuse(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return value;
}

/** The port to listen on: the flag's, else the variable's, 0-65535 (0: a free one). */
function portNumber(flag: string | undefined): number {
  const raw = flag ?? process.env['MESSAGES_API_PORT'] ?? '';
  if (raw.trim() === '') return 0;
  if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65_535) {
    refuse(`MESSAGES_API_PORT must be a port, 0-65535, got ${JSON.stringify(raw.slice(0, 40))}`);
  }
  return Number(raw);
}

/** The rate limits of the flag, else the variable: JSON checked with zod before the server starts. */
function rateLimits(flag: string | undefined): RateLimits | null {
  const raw = flag ?? process.env['MESSAGES_API_RATE_LIMITS'];
  if (raw === undefined || raw.trim() === '') return null;
  const label = flag !== undefined ? '--rate-limits' : 'MESSAGES_API_RATE_LIMITS';
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (error) {
    return refuse(`${label} is not JSON (${(error as Error).message}): ${JSON.stringify(raw.slice(0, 80))}`);
  }
  const parsed = rateLimitsSchema.safeParse(json);
  if (!parsed.success) refuse(`${label} is not rate limits:\n${scriptProblems(parsed.error)}`);
  return parsed.data;
}

/** The scripts of the script file, checked before the server starts. */
function scriptFile(flag: string | undefined): [string, ScriptStep[]][] {
  const file = flag ?? process.env['MESSAGES_API_SCRIPT_FILE'];
  if (!file) return [];
  const label = flag ? '--script-file' : 'MESSAGES_API_SCRIPT_FILE';
  let parsed;
  try {
    parsed = scriptFileSchema.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
  } catch (error) {
    return refuse(`${label} ${file}: ${(error as Error).message}`);
  }
  if (!parsed.success) refuse(`${label} ${file} is not a script file:\n${scriptProblems(parsed.error)}`);
  return Object.entries(parsed.data).map(([match, steps]) => [match, asScriptSteps(steps)]);
}

async function main(): Promise<void> {
  const flags = commandLine();
  if (flags.version) return console.log(packageVersion());
  if (flags.help) return console.log(USAGE);
  const scripts = scriptFile(flags['script-file']);
  const limits = rateLimits(flags['rate-limits']);
  const contextWindow = flags['context-window'] ?? process.env['MESSAGES_API_CONTEXT_WINDOW'];
  const server = await startMessagesApi({
    host: flags.host || process.env['MESSAGES_API_HOST'] || '127.0.0.1',
    port: portNumber(flags.port),
    latencyMs: nonNegativeInteger(flags['latency-ms'], 'MESSAGES_API_LATENCY_MS', 0),
    ...(contextWindow && {
      contextWindowTokens: nonNegativeInteger(contextWindow, 'MESSAGES_API_CONTEXT_WINDOW', 1_000_000),
    }),
    tokenDelayMs: nonNegativeInteger(flags['token-delay-ms'], 'MESSAGES_API_TOKEN_DELAY_MS', 0),
    batchDelayMs: nonNegativeInteger(flags['batch-delay-ms'], 'MESSAGES_API_BATCH_DELAY_MS', 200),
    rateLimits: limits,
  });
  for (const [match, steps] of scripts) server.script(match, steps);
  console.log(`Local Messages API server listening on ${server.url}`);
  if (limits) console.log(`Rate limits per model and minute: ${JSON.stringify(limits)}`);
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: stopping the local Messages API server`);
    void server.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
