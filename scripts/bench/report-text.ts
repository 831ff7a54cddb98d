// The console report: one table per item, then the targets with PASS/FAIL.
import type { BenchResults } from './results';
import { fmtBytes, fmtMs, fmtNum, fmtRatio, pct } from './format';
import { PHASES } from './step-breakdown';
import { verdict } from './targets';
import { textTable } from './text-table';
import { formatUsd } from '../../common/pricing';

const PHASE_HEADERS = PHASES.map((phase) => phase.replace('model.', 'm.').replace('tool.', 't.'));

export function textReport(results: BenchResults): string {
  const out: string[] = [];
  const { overhead, throughput, history, cost, streaming } = results;
  const heading = (title: string): void =>
    void out.push('', `── ${title} ${'─'.repeat(Math.max(0, 100 - title.length))}`);

  heading(
    `Machine: ${results.machine.cpus} × ${results.machine.cpuModel}; load average ${results.machine.loadAverageStart.map((l) => l.toFixed(1)).join(' ')} at start, ` +
      `${results.machine.loadAverageEnd.map((l) => l.toFixed(1)).join(' ')} at end (provisional unless the machine was quiet)`,
  );

  if (overhead) {
    heading(
      `1. Overhead per chain step — one conversation, ${overhead.steps}-step chain (step = model call + tool call)`,
    );
    const rows: string[][] = [];
    for (const l of overhead.latencies) {
      // One row per way of running the chain: its step and whole-chain timings.
      const timingRow = (latency: string, label: string, t: typeof l.orchestrator): string[] => [
        latency,
        label,
        fmtMs(t.step.p50),
        fmtMs(t.step.p95),
        fmtMs(t.chain.p50),
        fmtMs(t.chain.p95),
        String(l.reps),
      ];
      rows.push(timingRow(`${l.latencyMs} ms`, 'orchestrator', l.orchestrator));
      if (l.bare) rows.push(timingRow('', 'bare Temporal chain', l.bare));
      rows.push(timingRow('', 'in-process loop', l.inProcess));
      rows.push([
        '',
        'overhead (orch − loop)',
        fmtMs(l.overheadPerStepMs.p50),
        fmtMs(l.overheadPerStepMs.p95),
        fmtMs(l.orchestrator.chain.p50 - l.inProcess.chain.p50),
        '',
        '',
      ]);
      if (l.bare)
        rows.push([
          '',
          '  of which Temporal floor',
          fmtMs(l.bare.step.p50 - l.inProcess.step.p50),
          fmtMs(l.bare.step.p95 - l.inProcess.step.p95),
          fmtMs(l.bare.chain.p50 - l.inProcess.chain.p50),
          '',
          '',
        ]);
      rows.push([
        '',
        'ratio orch / loop',
        fmtRatio(l.stepRatioP50),
        fmtRatio(l.orchestrator.step.p95 / l.inProcess.step.p95),
        fmtRatio(l.chainRatio, 3),
        '',
        '',
      ]);
    }
    out.push(textTable(['latency', 'system', 'step p50', 'step p95', 'chain p50', 'chain p95', 'chains'], rows));
    out.push(
      '',
      'Where a step goes (mean ms per step, from the workflow histories; m.preRequest = activity start → request at the model):',
    );
    out.push(
      textTable(
        ['latency', 'system', ...PHASE_HEADERS, 'total'],
        overhead.latencies.flatMap((l) => [
          [`${l.latencyMs} ms`, 'orchestrator', ...PHASES.map((p) => fmtNum(l.phases[p])), fmtNum(l.phases.total)],
          ...(l.bare
            ? [['', 'bare', ...PHASES.map((p) => fmtNum(l.bare!.phases[p])), fmtNum(l.bare.phases.total)]]
            : []),
        ]),
      ),
    );
    for (const l of overhead.latencies) {
      out.push(
        `  at ${l.latencyMs} ms: workflow start → first model activity scheduled ${fmtMs(l.firstCall.startToSchedule)}; ` +
          `first model call activity start → request ${fmtMs(l.firstCall.preRequest)} (transcript cache miss: query) vs ${fmtMs(l.laterPreRequestMs)} for later calls`,
      );
    }
  }

  if (throughput) {
    heading(
      `2. Throughput — one worker process, ${throughput.steps} steps per conversation, ${throughput.latencyMs} ms model latency`,
    );
    const rows: string[][] = [];
    for (const p of throughput.points) {
      for (const run of [p.orchestrator, p.bare]) {
        if (!run) continue;
        rows.push([
          String(p.conversations),
          run.system === 'bare' ? 'bare ceiling' : 'orchestrator',
          `${run.completed}/${run.conversations}${run.timedOut ? ' (timeout)' : ''}${run.failed ? ` ${run.failed} failed` : ''}`,
          fmtMs(run.wallMs),
          fmtNum(run.stepsPerSecond),
          fmtNum(run.latencyBoundStepsPerSecond),
          run.system === 'orchestrator' ? fmtRatio(p.ratio) : '',
          fmtMs(run.conversationMs.p50),
          fmtMs(run.conversationMs.p95),
          fmtNum(run.worker.cpuMsPerStep, 2),
          fmtNum(run.serverCpuMsPerStep, 2),
          fmtNum(run.benchCpuMsPerStep, 2),
          `${run.activityTimeouts}/${run.historiesRead}`,
          String(run.rpcTimeouts),
        ]);
      }
    }
    out.push(
      textTable(
        [
          'conv',
          'system',
          'done',
          'wall',
          'steps/s',
          'latency-bound',
          'ratio',
          'conv p50',
          'conv p95',
          'worker CPU ms/step',
          'server CPU ms/step',
          'bench CPU ms/step',
          'act. timeouts/histories',
          'update RPC timeouts',
        ],
        rows,
      ),
    );
    out.push(
      '  CPU ms/step: CPU time of the process during the run ÷ completed steps (bench = this process: client and the local Messages API server).',
    );
    out.push(
      '  act. timeouts: activity attempts the server handed out that never completed (lost under overload), retried after the heartbeat timeout.',
    );
    const errors = throughput.points.flatMap((p) => [p.orchestrator, p.bare]).filter((r) => r?.firstError);
    for (const run of errors) out.push(`  ${run!.system} at ${run!.conversations}: first error: ${run!.firstError}`);
    out.push('', 'Where a step goes under load (mean ms per step over the histories read):');
    out.push(
      textTable(
        ['conv', 'system', ...PHASE_HEADERS, 'total'],
        throughput.points.flatMap((p) =>
          [p.orchestrator, p.bare]
            .filter((r) => r !== undefined)
            .map((run) => [
              String(p.conversations),
              run.system,
              ...PHASES.map((ph) => fmtNum(run.phases[ph])),
              fmtNum(run.phases.total),
            ]),
        ),
      ),
    );
  }

  if (history) {
    heading(
      "3. History growth — one conversation per length, latency 0 (server's describe(): historySize, historyLength)",
    );
    out.push(
      textTable(
        [
          'steps',
          'runs',
          'events',
          'bytes',
          'latest run events',
          'latest run bytes',
          'bytes/step',
          'marginal bytes/step',
          'events/step',
          'wall',
        ],
        history.points.map((p) => [
          String(p.steps),
          String(p.runs),
          String(p.total.historyLength),
          String(p.total.historySize),
          String(p.latestRun.historyLength),
          String(p.latestRun.historySize),
          fmtNum(p.bytesPerStep, 0),
          fmtNum(p.marginalBytesPerStep, 0),
          fmtNum(p.eventsPerStep, 1),
          fmtMs(p.wallMs),
        ]),
      ),
    );
    for (const p of history.points.filter((point) => point.runs > 1)) {
      out.push(
        `  ${p.steps} steps: the server suggested continue-as-new; tool calls per run ${p.stepsPerRun.join(' + ')}. Totals add every run, ` +
          'including the transcript carried into the new run (in its ContinuedAsNew and WorkflowExecutionStarted events).',
      );
    }
    const longest = history.points.at(-1);
    if (longest) {
      const perStep = Object.entries(longest.payloadBytes)
        .filter(([, b]) => b / longest.steps >= 5)
        .sort((a, b) => b[1] - a[1]);
      const payload = Object.values(longest.payloadBytes).reduce((a, b) => a + b, 0);
      out.push(
        `  what a step writes (${longest.steps}-step chain, payload bytes per step): ` +
          perStep.map(([type, b]) => `${type} ${Math.round(b / longest.steps)}`).join(', ') +
          `; event overhead (the rest) ${Math.round((longest.total.historySize - payload) / longest.steps)}`,
      );
    }
    if (cost) {
      for (const run of cost.runs) {
        const model = Math.round((run.payloadBytes['activityTaskScheduled model'] ?? 0) / (cost.steps + 1));
        out.push(
          `  with the ~${cost.systemPromptTokens}-token system prompt (cost run, caching ${run.promptCaching ? 'on' : 'off'}): ${Math.round(run.historyBytesPerStep)} B/step; ` +
            `each callModel input carries ${model} B (options, system prompt included, + new messages)`,
        );
      }
    }
  }

  if (throughput && results.args.only.includes('memory')) {
    heading('4. Worker memory — RSS of the worker process, sampled every 200 ms during the throughput runs');
    const rows: string[][] = [];
    for (const p of throughput.points) {
      for (const run of [p.orchestrator, p.bare]) {
        if (!run) continue;
        const extra = run.worker.peakRssBytes - run.worker.idleRssBytes;
        rows.push([
          String(p.conversations),
          run.system === 'bare' ? 'bare ceiling' : 'orchestrator',
          fmtBytes(run.worker.idleRssBytes),
          fmtBytes(run.worker.peakRssBytes),
          fmtBytes(run.worker.highWaterMarkBytes),
          fmtBytes(extra / p.conversations),
        ]);
      }
    }
    out.push(
      textTable(
        ['conv', 'system', 'RSS at start', 'peak RSS (sampled)', 'VmHWM', 'peak − start per conversation'],
        rows,
      ),
    );
  }

  if (cost) {
    heading(
      `5. Cost — input tokens per model call, ${cost.steps}-step chain, ~${cost.systemPromptTokens}-token system prompt`,
    );
    const on = cost.runs.find((r) => r.promptCaching);
    const off = cost.runs.find((r) => !r.promptCaching);
    const calls = Math.max(on?.calls.length ?? 0, off?.calls.length ?? 0);
    const rows: string[][] = [];
    for (let i = 0; i < calls; i++) {
      const a = on?.calls[i];
      const b = off?.calls[i];
      rows.push([
        String(i + 1),
        a ? String(a.inputTokens) : '',
        a ? String(a.cacheReadInputTokens) : '',
        a ? String(a.cacheCreationInputTokens) : '',
        a ? pct(a.cachedFraction) : '',
        b ? String(b.inputTokens) : '',
        b ? String(b.cacheReadInputTokens) : '',
        b ? String(b.cacheCreationInputTokens) : '',
      ]);
    }
    out.push(
      textTable(
        [
          'call',
          'on: input',
          'on: cache_read',
          'on: cache_creation',
          'on: cached',
          'off: input',
          'off: cache_read',
          'off: cache_creation',
        ],
        rows,
      ),
    );
    for (const run of cost.runs) {
      out.push(
        `  caching ${run.promptCaching ? 'on ' : 'off'}: cached from call 3 on ${pct(run.cachedFractionFromCall3)}; all input ${run.totalInput} tokens; ` +
          `billed as ${Math.round(run.totalBilledEquivalent)} base-input-token equivalents (writes ×1.25, reads ×0.1)`,
      );
    }
    out.push(`  caching on costs ${pct(cost.savings)} of caching off, for input.`);
    const { input, output, cacheWrite, cacheRead } = cost.prices;
    out.push(
      `  cost per ${cost.steps}-step chain on ${cost.model} ($${input} in, $${output} out, $${cacheWrite} cache write, $${cacheRead} cache read per MTok):`,
    );
    for (const run of cost.runs) {
      out.push(
        `    caching ${run.promptCaching ? 'on ' : 'off'}: ${formatUsd(run.usd)} (${formatUsd(run.usd / cost.steps)} per step; the conversation reported ${formatUsd(run.reportedUsd)})`,
      );
    }
    out.push(`    with caching the chain costs ${pct(cost.usdRatio)} of what it costs without.`);
  }

  if (streaming) {
    heading(
      `6. Streaming replies — tokens every ${streaming.tokenDelayMs} ms after ${streaming.modelLatencyMs} ms, live reply heartbeated at most every ${streaming.flushIntervalMs} ms, ${streaming.steps}-step chains`,
    );
    for (const l of streaming.latency) {
      out.push(
        `token → client, ${l.conversations} conversation(s): p50 ${fmtMs(l.latencyMs.p50)}, p95 ${fmtMs(l.latencyMs.p95)}, max ${fmtMs(l.latencyMs.max)} (${l.tokens} tokens)`,
      );
    }
    for (const [name, h] of [
      ['streaming on ', streaming.history.streaming],
      ['streaming off', streaming.history.plain],
    ] as const) {
      out.push(
        `history, ${name}: ${Math.round(h.bytesPerModelCall)} B and ${h.eventsPerModelCall.toFixed(1)} events per model call (${h.signalsPerModelCall.toFixed(1)} signals, ${h.updatesPerModelCall.toFixed(1)} updates)`,
      );
    }
    for (const [name, t] of [
      ['streaming on ', streaming.throughput.streaming],
      ['streaming off', streaming.throughput.plain],
    ] as const) {
      out.push(
        `throughput, ${name}: ${t.stepsPerSecond.toFixed(1)} steps/s, ${t.conversations} conversations in ${fmtMs(t.wallMs)}${t.failed ? `, ${t.failed} failed` : ''}; CPU per step: worker ${t.cpuMsPerStep.worker.toFixed(1)} ms, server ${t.cpuMsPerStep.server.toFixed(1)} ms, bench (client + Messages API) ${t.cpuMsPerStep.bench.toFixed(1)} ms`,
      );
    }
  }

  heading('Targets');
  out.push(
    textTable(
      ['', 'target', 'measured', 'verdict'],
      results.targets.map((t) => [t.name, t.target, t.measured, verdict(t.pass)]),
    ),
  );
  return out.join('\n');
}
