// The soak script's judgements: a tool call that ran more than once (scripts/soak/tool-executions.ts), what a
// disconnecting stream reader saw (stream-reading.ts), a worker's exit and the run's verdict (report.ts). A check that
// could never fail would prove nothing, so each is shown failing on made-up inputs.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isWorkerCrash, type SoakFigures, soakVerdict } from '../../scripts/soak/report';
import { judgeReading, readingProblem, type SeenItem } from '../../scripts/soak/stream-reading';
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

describe('the soak judges what a disconnecting stream reader saw', () => {
  const durable = (offset: number, type = 'text', turn?: number): SeenItem => ({
    offset,
    type,
    ...(turn !== undefined && { turn }),
  });
  const whole = [
    durable(0, 'turn_started', 1),
    durable(1),
    { offset: 1, live: true, type: 'text' },
    durable(2),
    durable(3, 'turn_finished', 1),
    durable(4, 'conversation_ended'),
  ];

  test('every offset once, in order, with the turn end: whole (live items are not the log, and not counted)', () => {
    const verdict = judgeReading(whole);
    assert.deepEqual(verdict, { events: 5, gaps: [], repeats: [], sawTurnEnd: true, sawConversationEnd: true });
    assert.equal(readingProblem(verdict), undefined);
  });

  test('a re-attach that skipped an offset is a gap; one that started again before it is a repeat', () => {
    const skipped = judgeReading(whole.filter((item) => item.offset !== 2));
    assert.deepEqual(skipped.gaps, [2]);
    assert.match(readingProblem(skipped)!, /offsets missing: 2/);
    const again = judgeReading([...whole.slice(0, 3), durable(1), ...whole.slice(3)]);
    assert.deepEqual(again.repeats, [1]);
    assert.match(readingProblem(again)!, /offsets read twice: 1/);
    assert.deepEqual(judgeReading([durable(1), durable(2, 'turn_finished', 1)]).gaps, [0], 'the log starts at 0');
  });

  test("a reading without its turn's end is not whole", () => {
    const cut = judgeReading(whole.slice(0, 3));
    assert.equal(cut.sawTurnEnd, false);
    assert.match(readingProblem(cut)!, /the turn end was never read/);
    assert.equal(judgeReading(whole, 2).sawTurnEnd, false, "another turn's end is not this one's");
  });
});

describe('the soak counts a worker that exits unasked as a crash', () => {
  test("the soak's own SIGKILL or stop is not a crash; any other exit is, whatever its code or signal", () => {
    assert.equal(isWorkerCrash({ pid: 1, code: null, signal: 'SIGKILL', asked: true }), false);
    assert.equal(isWorkerCrash({ pid: 1, code: 1, signal: null, asked: false }), true);
    assert.equal(isWorkerCrash({ pid: 1, code: null, signal: 'SIGABRT', asked: false }), true);
    assert.equal(isWorkerCrash({ pid: 1, code: null, signal: 'SIGKILL', asked: false }), true, 'an OOM kill');
    assert.equal(isWorkerCrash({ pid: 1, code: 0, signal: null, asked: false }), true, 'a worker never ends alone');
  });
});

describe("the soak's verdict", () => {
  const clean: SoakFigures = {
    started: 10,
    completed: 8,
    expected: { answered: 6, budget_exhausted: 2 },
    failed: 2,
    lost: 0,
    duplicates: 0,
    stuck: 0,
    workerCrashes: 0,
    unexplainedReruns: 0,
    streamGaps: 0,
    streamRepeats: 0,
    elapsedMs: 1000,
  };

  test('passes with nothing lost, duplicated, stuck or crashed: a failed conversation is reported, not fatal', () => {
    assert.deepEqual(soakVerdict(clean), { ok: true, problems: [] });
  });

  test('fails on each of lost, duplicates, stuck, worker crashes, unexplained re-runs and stream gaps or repeats', () => {
    const cases: [Partial<SoakFigures>, RegExp][] = [
      [{ lost: 1 }, /1 lost/],
      [{ duplicates: 2 }, /2 duplicates/],
      [{ stuck: 1 }, /1 stuck/],
      [{ workerCrashes: 1 }, /1 worker crashes/],
      [{ unexplainedReruns: 1 }, /1 re-runs without a cause/],
      [{ streamGaps: 3 }, /3 offsets missed/],
      [{ streamRepeats: 1 }, /1 offsets read twice/],
    ];
    for (const [change, problem] of cases) {
      const verdict = soakVerdict({ ...clean, ...change });
      assert.equal(verdict.ok, false, JSON.stringify(change));
      assert.equal(verdict.problems.length, 1);
      assert.match(verdict.problems[0]!, problem);
    }
  });
});
