// What spans and log lines keep of errors and texts when content is off: types and sizes, never the text.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { DefaultLogger, type LogEntry, LogTimestamp } from '@temporalio/worker';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ToolError } from '../../activities/tool-definition';
import {
  contentFreeException,
  contentFreeLogMessage,
  contentFreeLogMeta,
  contentFreeSpan,
  describeError,
  sizeOf,
  stackFrames,
} from '../../tracing/content-free';
import { ContentFreeLogger } from '../../tracing/content-free-logger';
import { GEN_AI } from '../../tracing/genai-attributes';

const SECRET = 'SECRET-PATIENT-NAME-4711';

test('content-free: a text is described by its size', () => {
  assert.equal(sizeOf(`no ticker for "${SECRET}"`), '(40 characters)');
});

test('content-free: an error is described by its class, name, type or code and the size of its message', () => {
  assert.equal(
    describeError(new ToolError('TickerNotFound', `no ticker for "${SECRET}"`)),
    'ToolError TickerNotFound (40 characters)',
  );
  const failure = ApplicationFailure.create({
    type: 'TickerNotFound',
    message: `no ticker for "${SECRET}"`,
    category: ApplicationFailureCategory.BENIGN,
  });
  assert.equal(describeError(failure), 'ApplicationFailure TickerNotFound (40 characters)');
  assert.equal(describeError(new McpError(ErrorCode.InvalidParams, SECRET)), 'McpError -32602 (42 characters)');
  assert.equal(describeError(new TypeError(SECRET)), 'TypeError (24 characters)');
  assert.equal(describeError(SECRET), '(24 characters)');
  assert.equal(describeError({ message: SECRET }), 'object (24 characters)');
});

test('content-free: causes are described too, a few deep', () => {
  const cause = new McpError(ErrorCode.InvalidParams, 'x'.repeat(600_000));
  const failure = ApplicationFailure.create({ type: 'McpProtocolError', message: `s · t: ${cause.message}`, cause });
  assert.equal(
    describeError(failure),
    'ApplicationFailure McpProtocolError (600025 characters), caused by McpError -32602 (600018 characters)',
  );
  let deep: Error = new Error('root');
  for (let i = 0; i < 10; i++) deep = new Error('wrapper', { cause: deep });
  assert.equal(describeError(deep).split(', caused by ').length, 4);
});

test('content-free: a name or type that is not a word is text, and is not repeated', () => {
  const error = new Error(SECRET);
  error.name = `${SECRET} with spaces`;
  assert.equal(describeError(error), 'Error (24 characters)');
  const typed = ApplicationFailure.create({ type: 'a'.repeat(65), message: '' });
  assert.equal(describeError(typed), 'ApplicationFailure (0 characters)');
});

test('content-free: a stack trace keeps its frames and loses its header, however many lines the message has', () => {
  const message = `no ticker for "${SECRET}"\n    at ${SECRET} (evil.js:1:1)`;
  const error = new Error(message);
  const frames = stackFrames(error.stack!, message)!;
  assert.ok(frames.length > 0);
  assert.doesNotMatch(frames, /SECRET/);
  for (const line of frames.split('\n')) assert.match(line, /^\s+at \S/);
});

test('content-free: a stack trace whose header does not hold the message is dropped whole', () => {
  const stack = `Error: ${SECRET}\n    at lookup (tools.js:1:1)`;
  assert.equal(stackFrames(stack, 'a message set after the stack was written'), undefined);
  assert.equal(stackFrames(`Error: ${SECRET}`, SECRET), undefined, 'no frames: nothing');
});

test('content-free: an exception event keeps its type, says the size of its message, and its frames', () => {
  const error = ApplicationFailure.create({ type: 'TickerNotFound', message: `no ticker for "${SECRET}"` });
  const event = contentFreeException(
    {
      'exception.type': 'ApplicationFailure',
      'exception.message': error.message,
      'exception.stacktrace': error.stack!,
    },
    'TickerNotFound',
  );
  assert.equal(event['exception.type'], 'ApplicationFailure');
  assert.equal(event['exception.message'], 'ApplicationFailure TickerNotFound (40 characters)');
  assert.match(String(event['exception.stacktrace']), /^\s+at /);
  assert.doesNotMatch(JSON.stringify(event), /SECRET/);
});

test('content-free: a span loses content attributes, exception text and status message, and keeps the rest', () => {
  const span = contentFreeSpan({
    attributes: {
      temporalActivityId: '1',
      'error.type': 'TickerNotFound',
      [GEN_AI.toolCallArguments]: `{"company_name":"${SECRET}"}`,
      [GEN_AI.toolCallResult]: SECRET,
      temporalTerminateReason: SECRET,
    },
    events: [
      { name: 'exception', attributes: { 'exception.type': 'ApplicationFailure', 'exception.message': SECRET } },
      { name: 'other', attributes: { [GEN_AI.inputMessages]: SECRET, count: 2 } },
    ],
    status: { code: 2, message: SECRET },
  });
  assert.deepEqual(span.attributes, { temporalActivityId: '1', 'error.type': 'TickerNotFound' });
  assert.deepEqual(span.events, [
    {
      name: 'exception',
      attributes: {
        'exception.type': 'ApplicationFailure',
        'exception.message': 'ApplicationFailure TickerNotFound (24 characters)',
      },
    },
    { name: 'other', attributes: { count: 2 } },
  ]);
  assert.deepEqual(span.status, { code: 2, message: 'ApplicationFailure TickerNotFound (24 characters)' });
});

test('content-free: a status message without an exception event is described by its size', () => {
  const span = contentFreeSpan({ attributes: {}, events: [], status: { code: 2, message: SECRET } });
  assert.deepEqual(span.status, { code: 2, message: '(24 characters)' });
  assert.deepEqual(contentFreeSpan({ attributes: {}, events: [], status: { code: 1 } }).status, { code: 1 });
});

test("content-free: a log message keeps its fixed part; what follows ': ' is described by its size", () => {
  assert.equal(contentFreeLogMessage('Activity failed'), 'Activity failed');
  assert.equal(
    contentFreeLogMessage(`Error while processing ActivityTask.start: cannot decode ${SECRET}`),
    'Error while processing ActivityTask.start: (38 characters)',
  );
  assert.equal(contentFreeLogMessage(`MCP files stderr:\n${SECRET}`), 'MCP files stderr: (24 characters)');
  assert.equal(contentFreeLogMessage('x'.repeat(600_000)), '(600000 characters)');
});

test('content-free: log metadata keeps identifiers, numbers and the timestamp; errors and other texts are sized', () => {
  const failure = ApplicationFailure.create({ type: 'TickerNotFound', message: `no ticker for "${SECRET}"` });
  const meta = contentFreeLogMeta({
    [LogTimestamp]: 42n,
    sdkComponent: 'activity',
    workflowId: 'conv-1',
    activityType: 'get_ticker_symbol',
    attempt: 1,
    isLocal: false,
    durationMs: 3,
    error: failure,
    failure: `Failure { message: "${SECRET}" }`,
    task: JSON.stringify({ input: SECRET }),
    stderr: [SECRET],
    details: { SECRET },
    workflowType: 'w'.repeat(600),
  });
  const { [LogTimestamp]: timestamp, ...rest } = meta;
  assert.equal(timestamp, 42n);
  assert.deepEqual(rest, {
    sdkComponent: 'activity',
    workflowId: 'conv-1',
    activityType: 'get_ticker_symbol',
    attempt: 1,
    isLocal: false,
    durationMs: 3,
    error: 'ApplicationFailure TickerNotFound (40 characters)',
    failure: '(47 characters)',
    task: '(36 characters)',
    stderr: '(1 items)',
    details: '(object)',
    workflowType: '(600 characters)',
  });
});

test('content-free: the logger passes each line on at its level, with its timestamp, without content', () => {
  const entries: LogEntry[] = [];
  const logger = new ContentFreeLogger(new DefaultLogger('TRACE', (entry) => entries.push(entry)));
  logger.warn('Activity failed', { [LogTimestamp]: 7n, error: new Error(SECRET), activityType: 'find_patient' });
  logger.log('ERROR', `Workflow Worker Thread failed: ${SECRET}`);
  assert.deepEqual(entries, [
    {
      level: 'WARN',
      message: 'Activity failed',
      meta: { error: 'Error (24 characters)', activityType: 'find_patient' },
      timestampNanos: 7n,
    },
    {
      level: 'ERROR',
      message: 'Workflow Worker Thread failed: (24 characters)',
      meta: undefined,
      timestampNanos: entries[1]!.timestampNanos,
    },
  ]);
});
