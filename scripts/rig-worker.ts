// The worker the test rigs start as a child process (crash tests, soak, bench): workers/main.ts with the demo tools,
// plus instrumentation from three more variables — TOOL_EXECUTION_LOG (a JSON line per tool execution start and end),
// TOOL_LATENCY_MS (a pause before every tool execution) and TOOL_OUTPUT_CHARS (tool outputs padded to that length).
// RIG_AGENT_TOOLS=1 adds the sub-agent tool of scripts/rig-agent-tools.ts (unset: the demo tools only, as before).
import { ConfigError } from '../workers/config';
import { runWorker } from '../workers/run-worker';
import { demoTools } from '../testing/demo-tools';
import { rigAgentTools } from './rig-agent-tools';
import { toolInstrumentation } from './tool-execution-log';

const latencyMs = Number(process.env.TOOL_LATENCY_MS ?? 0);
if (!Number.isInteger(latencyMs) || latencyMs < 0) {
  console.error('TOOL_LATENCY_MS: must be a whole number of milliseconds');
  process.exit(1);
}
const outputChars = Number(process.env.TOOL_OUTPUT_CHARS ?? 0);
if (!Number.isInteger(outputChars) || outputChars < 0) {
  console.error('TOOL_OUTPUT_CHARS: must be a whole number of characters');
  process.exit(1);
}
const instrumentation = toolInstrumentation({
  ...(process.env.TOOL_EXECUTION_LOG && { executionLog: process.env.TOOL_EXECUTION_LOG }),
  latencyMs,
  outputChars,
});

const tools = process.env.RIG_AGENT_TOOLS === '1' ? [...demoTools, ...rigAgentTools] : demoTools;

runWorker({ tools, interceptors: { activity: [instrumentation] } }).catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
