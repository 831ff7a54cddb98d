// `npm run bench:long-chain`'s flags and report, without Temporal: the defaults are the issue's 1,000-step chain, bad
// flags are refused, and the report says whether every run stayed under Temporal's continue-as-new suggestion.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../../scripts/script-main';
import { renderText } from '../../scripts/bench/table';
import {
  DEFAULT_OPTIONS,
  longChainTable,
  parseLongChainArgs,
  SUGGESTED_HISTORY_EVENTS,
  type VariantResult,
} from '../../scripts/bench/long-chain';

test('flags: a 1,000-step chain with outputs of a few KB by default; sizes and variants can change; bad flags refused', () => {
  const defaults = parseLongChainArgs([])!;
  assert.equal(defaults.steps, 1_000);
  assert.equal(defaults.outputChars, 3_000);
  assert.deepEqual(defaults.variants, ['off', 'compaction', 'clear-tool-uses', 'orchestrator']);
  const custom = parseLongChainArgs(['--steps', '40', '--window=60000', '--variants', 'off,compaction'])!;
  assert.equal(custom.steps, 40);
  assert.equal(custom.windowTokens, 60_000);
  assert.deepEqual(custom.variants, ['off', 'compaction']);
  assert.throws(() => parseLongChainArgs(['--variants', 'magic']), UsageError);
  assert.throws(() => parseLongChainArgs(['--steps', '-3']), UsageError);
  assert.throws(() => parseLongChainArgs(['--speed', '3']), UsageError);
});

test("the report: one row per variant, and whether every run stayed under Temporal's suggestion", () => {
  const row: VariantResult = {
    variant: 'compaction',
    status: 'awaiting_user',
    text: 'Done after 1000 lookups.',
    toolCalls: 1_000,
    modelCalls: 1_001,
    requests: 1_001,
    summaryCalls: 0,
    compactions: 13,
    clearedToolUses: 0,
    peakInputTokensSent: 60_512,
    peakInputTokensRead: 59_870,
    largestRequestBytes: 250_000,
    runs: 4,
    historyBytes: 7_000_000,
    historyEvents: 12_000,
    largestRunBytes: 2_100_000,
    largestRunEvents: 3_600,
    wallMs: 95_000,
  };
  const report = renderText(
    longChainTable(DEFAULT_OPTIONS, [row, { ...row, variant: 'orchestrator', summaryCalls: 13 }]),
  );
  assert.match(report, /^── A 1000-step chain, tool outputs of 3000 characters/m);
  assert.match(report, /compaction\s+awaiting_user\s+1000\s+1001\s+13\s/);
  assert.match(report, /orchestrator\s+awaiting_user\s+1000\s+1001 \+ 13\s/);
  assert.match(report, /4,096 events\): yes$/);
  const over = renderText(
    longChainTable(DEFAULT_OPTIONS, [{ ...row, largestRunEvents: SUGGESTED_HISTORY_EVENTS + 10 }]),
  );
  assert.match(over, /: NO$/);
});
