// The benchmark's building blocks produce sane numbers (no Temporal, no timing assertions): statistics, the flags,
// the scripted chain, the in-process baseline against the local Messages API server, the step breakdown read from a
// history, the system prompt's size, the process sampler, the guard's verdicts, and the reports built from tables.
// (bench-load.test.ts runs the load runner itself on the dev server.)
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { demoTools } from '../../testing/demo-tools';
import { describeTool } from '../../activities/tool-definition';
import { Flags, parseArgs } from '../../scripts/bench/args';
import { UsageError } from '../../scripts/script-main';
import { chainSteps, CHAIN_TOOLS, requestsOf, scriptChain } from '../../scripts/bench/chain-script';
import { InProcessLoop } from '../../scripts/bench/in-process-loop';
import { checkGuard, guardTable, MARGINS, readBaseline, runGuard } from '../../scripts/bench/guard';
import type { LoadRun } from '../../scripts/bench/load';
import type { SideBySideResult } from '../../scripts/bench/side-by-side';
import { encodedBytes, type HistoryEvent, stepBreakdown } from '../../scripts/bench/history';
import { type BenchResults, checkTargets, htmlReport, textReport } from '../../scripts/bench/report';
import { gaps, percentile, ProcessSampler, summarize } from '../../scripts/bench/measure';
import { REALISTIC_SYSTEM_PROMPT } from '../../scripts/bench/system-prompt';
import { renderHtml, renderText, textTable } from '../../scripts/bench/table';
import { withMessagesApi } from '../../testing/messages-api/sdk-client';
import { estimateTokens } from '../../testing/messages-api/tokens';

describe('bench building blocks', () => {
  test('percentiles interpolate between ranks; summaries and gaps', () => {
    assert.equal(percentile([1, 2, 3, 4], 50), 2.5);
    assert.equal(percentile([5], 95), 5);
    assert.ok(Number.isNaN(percentile([], 50)));
    const s = summarize([10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
    assert.equal(s.n, 10);
    assert.equal(s.p50, 55);
    assert.ok(s.p95 > 90 && s.p95 <= 100);
    assert.deepEqual(gaps([100, 130, 175]), [30, 45]);
  });

  test('flags: defaults, subsets and sizes, bad input refused', () => {
    const defaults = parseArgs([])!;
    assert.deepEqual(defaults.conversations, [10, 100, 1000]);
    assert.equal(defaults.steps, 5);
    assert.equal(defaults.latencyMs, 1000);
    assert.deepEqual(defaults.historySteps, [10, 100, 500]);
    const custom = parseArgs([
      '--only',
      'overhead,history',
      '--conversations',
      '10,100',
      '--steps=3',
      '--latency',
      '0',
    ])!;
    assert.deepEqual([...custom.only].sort(), ['history', 'overhead']);
    assert.deepEqual(custom.conversations, [10, 100]);
    assert.equal(custom.steps, 3);
    assert.equal(custom.latencyMs, 0);
    assert.ok(parseArgs(['--only', 'memory'])!.only.has('throughput'), 'memory is measured during throughput');
    assert.deepEqual(defaults.peerSteps, [1, 8, 32]);
    assert.equal(defaults.peerConversations, 20);
    assert.equal(defaults.rounds, 2);
    assert.ok(defaults.only.has('peer') && defaults.only.has('guard'), 'the side by side and the guard run by default');
    const update = parseArgs(['--only', 'history', '--update-baseline'])!;
    assert.ok(update.updateBaseline && update.only.has('guard'), '--update-baseline runs the guard');
    assert.throws(() => parseArgs(['--only', 'speed']), UsageError);
    assert.throws(() => parseArgs(['--conversations', 'ten']), UsageError);
    // Every bench command reads its flags the way its help lists them (bench:mcp's here).
    const help = 'npm run bench:mcp -- [options]\n\n  --calls N    1 to 1000 (default 100)\n  --json FILE  samples';
    assert.equal(Flags.read([], help)!.int('calls', 100, { max: 1000 }), 100);
    assert.equal(Flags.read(['--calls', '7', '--json=x.json'], help)!.string('json'), 'x.json');
    assert.throws(() => Flags.read(['--calls', '1001'], help)!.int('calls', 100, { max: 1000 }), UsageError);
    assert.throws(() => Flags.read(['--rounds', '3'], help), UsageError, 'a flag its help does not list');
  });

  test('the scripted chain: N tool calls alternating two tools with valid inputs, then end_turn', () => {
    const steps = chainSteps(5);
    assert.equal(steps.length, 6);
    const byName = new Map(demoTools.map((tool) => [tool.name, tool]));
    for (const [i, step] of steps.slice(0, 5).entries()) {
      assert.ok('reply' in step && step.reply.stop_reason === 'tool_use');
      const call = step.reply.content.find((block) => block.type === 'tool_use');
      assert.ok(call && call.type === 'tool_use');
      assert.equal(call.name, CHAIN_TOOLS[i % 2]);
      assert.ok(byName.get(call.name)!.input.safeParse(call.input).success, `${call.name} input parses`);
    }
    const last = steps[5]!;
    assert.ok('reply' in last && last.reply.stop_reason === 'end_turn');
  });

  test('the in-process loop runs the chain against the local server: every step timed at the server', async () => {
    await withMessagesApi(async (mock) => {
      const loop = new InProcessLoop({
        baseURL: mock.url,
        request: { model: 'claude-sonnet-5-5', maxTokens: 1024, tools: CHAIN_TOOLS, promptCaching: true },
      });
      const prompt = scriptChain(mock, 3, 'smoke');
      const result = await loop.run(prompt);
      assert.equal(result.toolCalls, 3);
      assert.equal(result.modelCalls, 4);
      assert.match(result.text, /Done after 3 lookups/);
      const requests = requestsOf(mock, prompt);
      assert.equal(requests.length, 4);
      // The tool results went back to the model: the last request carries 3 tool_result messages.
      const toolResults = requests
        .at(-1)!
        .body.messages.filter(
          (m: { role: string; content: unknown }) =>
            m.role === 'user' &&
            Array.isArray(m.content) &&
            m.content.some((b: { type: string }) => b.type === 'tool_result'),
        );
      assert.equal(toolResults.length, 3);
      assert.ok(gaps(requests.map((r) => r.at)).every((gap) => gap >= 0));
    });
  });

  test('the realistic system prompt is about 2,000 tokens, so tools + system pass the 1,024-token cache minimum', () => {
    const tokens = estimateTokens(REALISTIC_SYSTEM_PROMPT);
    assert.ok(tokens >= 1800 && tokens <= 2300, `${tokens} tokens`);
    const tools = CHAIN_TOOLS.map((name) => describeTool(demoTools.find((tool) => tool.name === name)!));
    assert.ok(tokens + estimateTokens(JSON.stringify(tools)) > 1024);
  });

  test('the step breakdown reads phases from a history and they add up to the step', () => {
    let id = 0;
    const t = (ms: number) => ({ seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 });
    const ev = (ms: number, attrs: Record<string, unknown>): HistoryEvent =>
      ({ eventId: ++id, eventTime: t(ms), ...attrs }) as unknown as HistoryEvent;
    const events: HistoryEvent[] = [];
    const wft = (start: number) => {
      events.push(ev(start, { workflowTaskScheduledEventAttributes: {} }));
      events.push(ev(start + 2, { workflowTaskStartedEventAttributes: {} }));
      events.push(ev(start + 5, { workflowTaskCompletedEventAttributes: {} }));
    };
    const activity = (name: string, at: number, run: number) => {
      const scheduledId = id + 1;
      events.push(ev(at, { activityTaskScheduledEventAttributes: { activityType: { name } } }));
      events.push(ev(at + 3, { activityTaskStartedEventAttributes: { scheduledEventId: scheduledId } }));
      events.push(ev(at + 3 + run, { activityTaskCompletedEventAttributes: { scheduledEventId: scheduledId } }));
    };
    events.push(ev(1_000_000, { workflowExecutionStartedEventAttributes: {} }));
    wft(1_000_001);
    activity('callModel', 1_000_006, 100); // closes at 1_000_109
    wft(1_000_110); // completes at 1_000_115
    activity('get_weather', 1_000_115, 4); // closes at 1_000_122
    wft(1_000_123); // completes at 1_000_128
    activity('callModel', 1_000_128, 100);
    const [step, ...rest] = stepBreakdown(events, 'callModel', [1_000_019]);
    assert.equal(rest.length, 0);
    assert.equal(step!.total, 122);
    assert.equal(step!['model.queue'], 3);
    assert.equal(step!['model.preRequest'], 10);
    assert.equal(step!['model.run'], 100);
    assert.equal(step!['wft.model.wait'], 3);
    assert.equal(step!['wft.model.run'], 3);
    assert.equal(step!['tool.queue'], 3);
    assert.equal(step!['tool.run'], 4);
    const parts =
      step!['model.queue'] +
      step!['model.run'] +
      step!['wft.model.wait'] +
      step!['wft.model.run'] +
      step!['tool.queue'] +
      step!['tool.run'] +
      step!['wft.tool.wait'] +
      step!['wft.tool.run'];
    assert.ok(Math.abs(parts - step!.total) <= 2, `${parts} vs ${step!.total}`); // the scheduled events follow the task completions
  });

  test(
    "the process sampler reads this process's RSS and CPU time (Linux)",
    { skip: !existsSync('/proc/self/status') },
    async () => {
      const sampler = new ProcessSampler(process.pid, 20);
      let x = 0;
      for (let i = 0; i < 2e6; i++) x += i;
      await new Promise((resolve) => setTimeout(resolve, 60));
      const usage = sampler.stop();
      assert.ok(x > 0);
      assert.ok(usage.samples.length >= 2);
      assert.ok(usage.peakRssBytes > 10 * 1024 * 1024 && usage.peakRssBytes < 64 * 1024 ** 3);
      assert.ok(usage.cpuMs >= 0);
    },
  );

  test('the guard fails past its margins only, and says so in a FAIL line', () => {
    const base = { timeRatio: 1.5, historyBytes: 10_000, historyEvents: 31 };
    const baseline = {
      updatedAt: '2026-01-01T00:00:00.000Z',
      commit: undefined,
      machine: { cpus: 2, cpuModel: 'test', loadAverageStart: [0, 0, 0] },
      conversations: 20,
      rounds: 2,
      lengths: { '1': base, '8': base },
    };
    const within = {
      timeRatio: 1.5 * (1 + MARGINS.time - 0.01),
      historyBytes: 10_000 * (1 + MARGINS.history - 0.001),
      historyEvents: 31,
    };
    const past = {
      timeRatio: 1.5 * (1 + MARGINS.time + 0.01),
      historyBytes: 10_000 * (1 + MARGINS.history + 0.001),
      historyEvents: 32,
    };
    assert.ok(checkGuard({ '1': within, '8': within }, baseline).every((c) => c.pass));
    const checks = checkGuard({ '1': within, '8': past, '32': past }, baseline);
    assert.deepEqual(
      checks.filter((c) => !c.pass).map((c) => `${c.measure} ${c.steps}`),
      ['time 8', 'history 8'],
      'a length the baseline lacks is not checked',
    );
    assert.deepEqual(checkGuard({ '1': past }, undefined), [], 'no baseline: nothing to check');
    // Time is judged on quiet rounds only (the rest of the machine under a quarter of a core), and fails when every
    // one of them is past the margin; with no quiet round it is not judged at all.
    const rounds = (ratios: number[], otherCores: number[]) => ({ ...past, timeRatios: ratios, otherCores });
    const verdict = (f: ReturnType<typeof rounds>) =>
      checkGuard({ '8': f }, baseline).find((c) => c.measure === 'time')!;
    assert.equal(verdict(rounds([1.9, 1.5], [0.1, 0.1])).pass, true, 'one quiet round within the margin');
    assert.equal(verdict(rounds([1.9, 1.5], [0.1, 1.5])).pass, false, 'the round within the margin was a busy one');
    assert.deepEqual(
      [verdict(rounds([1.9, 1.9], [1.2, 0.9])).judged, verdict(rounds([1.9, 1.9], [1.2, 0.9])).pass],
      [false, true],
    );
    const busyBaseline = { ...baseline, lengths: { '8': { ...base, quietRounds: 0 } } };
    const fromBusy = checkGuard({ '8': rounds([2.5], [0.1]) }, busyBaseline).find((c) => c.measure === 'time')!;
    assert.equal(fromBusy.judged, false, "a baseline measured on a busy machine judges no one's time");
    const runs = { conversations: 20, lengths: [8], rounds: 1, systems: [], runs: [] };
    const table = renderText(
      guardTable({ runs, figures: { '8': rounds([1.9], [1.2]) }, baseline, checks, pass: false, updated: false }),
    );
    assert.match(table, /at 8 step\(s\), 1 of 1 round\(s\) ran while the rest of the machine kept 1\.20 cores busy/);
    assert.match(table, /FAIL: time at 8 step\(s\) grew 16\.0%/);
    assert.match(table, /FAIL: history at 8 step\(s\) grew/);
  });

  test('--update-baseline keeps the time of a quiet baseline when every new round was busy, and rewrites history', async () => {
    const run = (system: string, round: number, wallMs: number, otherCores: number, bytes: number) =>
      ({ system, round, steps: 8, wallMs, otherCores, history: { bytes, events: 115 } }) as unknown as LoadRun & {
        round: number;
      };
    const side = (otherCores: number, oursMs: number, bytes: number): SideBySideResult => ({
      conversations: 20,
      lengths: [8],
      rounds: 1,
      systems: ['ours', 'floor'],
      runs: [run('ours', 1, oursMs, otherCores, bytes), run('floor', 1, 1000, otherCores, 5000)],
    });
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'bench-baseline-'));
    const file = path.join(dir, 'baseline.json');
    const options = {
      machine: { cpus: 2, cpuModel: 'test', loadAverageStart: [0, 0, 0] },
      commit: 'abc',
      baselineFile: file,
    };
    try {
      await runGuard(side(0.1, 1500, 30_000), { ...options, update: true });
      await runGuard(side(0.9, 2600, 31_000), { ...options, update: true });
      const kept = readBaseline(file)!.lengths['8']!;
      assert.equal(kept.timeRatio, 1.5, 'the busy round did not replace the quiet time');
      assert.equal(kept.historyBytes, 31_000, 'history is rewritten whatever the machine did');
      await runGuard(side(0.1, 1700, 31_000), { ...options, update: true });
      assert.equal(readBaseline(file)!.lengths['8']!.timeRatio, 1.7, 'a quiet round replaces it');
    } finally {
      await fsp.rm(dir, { recursive: true, force: true });
    }
  });

  test("a history's encoded size is what fetchHistory's events take on the wire", () => {
    const small = encodedBytes([
      { eventId: 1, workflowExecutionStartedEventAttributes: {} },
    ] as unknown as HistoryEvent[]);
    const large = encodedBytes([
      { eventId: 1, workflowExecutionStartedEventAttributes: { identity: 'x'.repeat(1000) } },
    ] as unknown as HistoryEvent[]);
    assert.ok(small > 0 && small < 20, `${small} B`);
    assert.ok(large - small >= 1000);
  });

  test('tables and reports render', () => {
    const table = textTable(
      ['name', 'value', 'ratio'],
      [
        ['a', '1 ms', '0.95×'],
        ['bb', '22 ms', '0.91–1.03×'],
      ],
    ).split('\n');
    assert.equal(table[2], 'a      1 ms       0.95×');
    assert.equal(table[3], 'bb    22 ms  0.91–1.03×');
    const html = renderHtml({
      title: 'T',
      headers: ['system', 'wall'],
      rows: [
        ['ours', '10 ms'],
        ['floor', '5 ms'],
      ],
    });
    assert.match(html, /<table><tr><th>system<\/th><th>wall<\/th><\/tr><tr><td>ours<\/td><td>10 ms<\/td>/);
    const results: BenchResults = {
      startedAt: new Date(0).toISOString(),
      finishedAt: new Date(1000).toISOString(),
      durationMs: 1000,
      git: undefined,
      args: { ...parseArgs([])!, only: ['history'] },
      machine: {
        cpus: 2,
        cpuModel: 'test',
        totalMemoryBytes: 1,
        node: process.version,
        platform: 'test',
        loadAverageStart: [0, 0, 0],
        loadAverageEnd: [0, 0, 0],
      },
      temporal: { address: 'localhost:7233', namespace: 'default', startedByBench: false },
      history: {
        points: [
          {
            steps: 10,
            runs: 1,
            total: { historyLength: 130, historySize: 30_000 },
            bytesPerStep: 3000,
            eventsPerStep: 13,
            marginalBytesPerStep: 3000,
            wallMs: 1,
            eventTypes: {},
            payloadBytes: {},
          },
          {
            steps: 100,
            runs: 1,
            total: { historyLength: 1210, historySize: 290_000 },
            bytesPerStep: 2900,
            eventsPerStep: 12.1,
            marginalBytesPerStep: 2889,
            wallMs: 1,
            eventTypes: {},
            payloadBytes: {},
          },
        ],
        growth: 2889 / 3000,
      },
      targets: [],
    };
    results.targets = checkTargets(results);
    // Sections not run (overhead, throughput, cost, the three streaming targets, the side by side) say n/a.
    assert.deepEqual(
      results.targets.map((t) => t.pass),
      [undefined, undefined, true, undefined, undefined, undefined, undefined, undefined],
    );
    const text = textReport(results);
    assert.match(text, /3\. History growth/);
    assert.match(text, /history .* PASS/);
    const page = htmlReport(results);
    assert.match(page, /^<!doctype html>/);
    assert.ok(!/<script|https?:\/\//.test(page), 'self-contained: no script, no network');
  });
});
