// The soak script's judgement of a tool call that ran more than once (scripts/soak/tool-executions.ts): a check that
// could never fail would prove nothing, so here it is shown failing on made-up logs.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type ExecutionLine, judgeToolCall } from '../../scripts/soak/tool-executions';

const KEY = 'soak-1/tool-toolu_1';
const line = (event: ExecutionLine['event'], pid: number, attempt: number, at: number): ExecutionLine => ({
  event,
  tool: 'get_ticker_symbol',
  idempotencyKey: KEY,
  attempt,
  pid,
  at,
});

describe('the soak judges every tool call that ran more than once', () => {
  test('a call in flight when its worker was SIGKILLed runs again: allowed, and the cause is named', () => {
    const lines = [line('start', 100, 1, 1000), line('start', 200, 2, 12_000), line('finish', 200, 2, 12_300)];
    const verdict = judgeToolCall(KEY, lines, new Map([[100, 1100]]), 12_350);
    assert.deepEqual(verdict.reruns, ['in-flight-at-kill']);
    assert.deepEqual(verdict.duplicates, []);
  });

  test('a call that finished but whose worker died before the server recorded it finished twice: at-least-once', () => {
    const lines = [
      line('start', 100, 1, 1000),
      line('finish', 100, 1, 1250),
      line('start', 200, 2, 12_000),
      line('finish', 200, 2, 12_300),
    ];
    const verdict = judgeToolCall(KEY, lines, new Map([[100, 1260]]), 12_320);
    assert.deepEqual(verdict.reruns, ['result-lost-with-worker']);
    assert.deepEqual(verdict.duplicates, []);
  });

  test('a run that starts after the server recorded the result is a duplicate', () => {
    const lines = [
      line('start', 100, 1, 1000),
      line('finish', 100, 1, 1250),
      line('start', 200, 1, 5000),
      line('finish', 200, 1, 5250),
    ];
    const verdict = judgeToolCall(KEY, lines, new Map(), 1270);
    assert.equal(verdict.duplicates.length, 1);
    assert.equal(verdict.duplicates[0]!.pid, 200);
    assert.deepEqual(verdict.reruns, ['unexplained'], 'the same attempt twice, with no kill: no cause');
  });

  test('a retry after an error and a timeout on a live worker are causes; a second run of the same attempt is not', () => {
    const afterError = judgeToolCall(
      KEY,
      [line('start', 100, 1, 0), line('error', 100, 1, 10), line('start', 100, 2, 1010)],
      new Map(),
      undefined,
    );
    assert.deepEqual(afterError.reruns, ['retried-after-error']);
    const timedOut = judgeToolCall(
      KEY,
      [line('start', 100, 1, 0), line('start', 200, 2, 30_000), line('finish', 100, 1, 31_000)],
      new Map(),
      undefined,
    );
    assert.deepEqual(timedOut.reruns, ['timed-out-while-alive']);
    const twice = judgeToolCall(KEY, [line('start', 100, 1, 0), line('start', 200, 1, 10)], new Map(), undefined);
    assert.deepEqual(twice.reruns, ['unexplained']);
  });

  test('a kill after the re-run started does not explain it', () => {
    const lines = [line('start', 100, 1, 0), line('start', 200, 1, 500)];
    assert.deepEqual(judgeToolCall(KEY, lines, new Map([[100, 800]]), undefined).reruns, ['unexplained']);
  });
});
