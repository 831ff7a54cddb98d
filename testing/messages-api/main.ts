// CLI: `npm run messages-api` (or `tsx testing/messages-api/main.ts`). Starts the local Messages API server and
// keeps it running until SIGINT/SIGTERM.
//   MESSAGES_API_PORT        port to listen on (default 0: any free port; the URL is printed)
//   MESSAGES_API_HOST        interface (default 127.0.0.1)
//   MESSAGES_API_LATENCY_MS  latency added before every answer (default 0)
//   MESSAGES_API_CONTEXT_WINDOW  the model's context window in input tokens (default 1,000,000)
//   MESSAGES_API_TOKEN_DELAY_MS  stream replies token by token, this many ms apart (default 0: at once)
//   MESSAGES_API_SCRIPT_FILE     a JSON file of scripts, {"<match>": [steps…]} (types.ts' ScriptStep); more can be
//                                sent while it runs: POST /_test/scripts {"match", "steps"} (server.ts)
import fs from 'node:fs';
import { asScriptSteps, scriptFileSchema, scriptProblems } from './script-schema';
import { startMessagesApi } from './server';
import type { ScriptStep } from './types';

function nonNegativeInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    console.error(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
    process.exit(2);
  }
  return value;
}

/** The scripts of MESSAGES_API_SCRIPT_FILE, checked before the server starts. */
function scriptFile(): [string, ScriptStep[]][] {
  const file = process.env['MESSAGES_API_SCRIPT_FILE'];
  if (!file) return [];
  let parsed;
  try {
    parsed = scriptFileSchema.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
  } catch (error) {
    console.error(`MESSAGES_API_SCRIPT_FILE ${file}: ${(error as Error).message}`);
    process.exit(2);
  }
  if (!parsed.success) {
    console.error(`MESSAGES_API_SCRIPT_FILE ${file} is not a script file:\n${scriptProblems(parsed.error)}`);
    process.exit(2);
  }
  return Object.entries(parsed.data).map(([match, steps]) => [match, asScriptSteps(steps)]);
}

async function main(): Promise<void> {
  const scripts = scriptFile();
  const server = await startMessagesApi({
    host: process.env['MESSAGES_API_HOST'] || '127.0.0.1',
    port: nonNegativeInteger('MESSAGES_API_PORT', 0),
    latencyMs: nonNegativeInteger('MESSAGES_API_LATENCY_MS', 0),
    ...(process.env['MESSAGES_API_CONTEXT_WINDOW'] && {
      contextWindowTokens: nonNegativeInteger('MESSAGES_API_CONTEXT_WINDOW', 1_000_000),
    }),
    tokenDelayMs: nonNegativeInteger('MESSAGES_API_TOKEN_DELAY_MS', 0),
  });
  for (const [match, steps] of scripts) server.script(match, steps);
  console.log(`Local Messages API server listening on ${server.url}`);
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
