// Tools that carry a marker string where content goes: in a result, and in the message of an unexpected error (a
// failure that is retried, then reported to the model). With the demo's get_ticker_symbol (its ToolError quotes its
// input) and the quoting MCP server (quoting-mcp-server.ts), a conversation plants the marker in a tool's input,
// result and error: test/e2e/no-content-in-spans-or-logs.test.ts looks for it in spans and in the worker's log.
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../../activities/tool-definition';

export const MARKER = 'SECRET-PATIENT-NAME-4711';

export const getPatientRecord = defineTool({
  name: 'get_patient_record',
  description: 'Gets the record of a patient by id.',
  input: z.object({ patient_id: z.string() }),
  run: ({ patient_id }) => ({ patient_id, name: `${MARKER} (in a result)` }),
});

export const findPatient = defineTool({
  name: 'find_patient',
  description: 'Finds a patient by name.',
  input: z.object({ name: z.string() }),
  maxAttempts: 2,
  retryInitialInterval: '100 milliseconds',
  run: ({ name }) => {
    throw new Error(`the patient registry refused ${JSON.stringify(name)}`);
  },
});

export const contentLeakTools = [getPatientRecord, findPatient] as ToolDefinition[];
