// CLI: `npm run mock-anthropic` (or `tsx scripts/mock-anthropic/main.ts`). Starts the local Messages API server and
// keeps it running until SIGINT/SIGTERM.
//   MOCK_ANTHROPIC_PORT        port to listen on (default 0: any free port; the URL is printed)
//   MOCK_ANTHROPIC_HOST        interface (default 127.0.0.1)
//   MOCK_ANTHROPIC_LATENCY_MS  latency added before every answer (default 0)
import { startMockAnthropic } from './server';

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

async function main(): Promise<void> {
  const server = await startMockAnthropic({
    host: process.env['MOCK_ANTHROPIC_HOST'] || '127.0.0.1',
    port: nonNegativeInteger('MOCK_ANTHROPIC_PORT', 0),
    latencyMs: nonNegativeInteger('MOCK_ANTHROPIC_LATENCY_MS', 0),
  });
  console.log(`Mock Messages API listening on ${server.url}`);
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: stopping the mock Messages API`);
    void server.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
