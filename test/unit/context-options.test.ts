// The `contextManagement` option: off by default; each mode's request fields as the Messages API documents them;
// the API's own defaults; and a clear error for what cannot work.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { apiContextManagement, summarisingItself } from '../../common/context-options';
import { withDefaults } from '../../common/options';

const contextOf = (input: Parameters<typeof withDefaults>[0]) => withDefaults(input).contextManagement;

describe('context management options', () => {
  test('off by default: requests carry no context_management and no beta header', () => {
    assert.equal(contextOf({}).mode, 'off');
    assert.equal(apiContextManagement(contextOf({})), undefined);
  });

  test("compaction by the API: compact_20260112 at 150,000 input tokens (the API's default), its beta header", () => {
    assert.deepEqual(apiContextManagement(contextOf({ contextManagement: { mode: 'compaction' } })), {
      config: { edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: 150_000 } }] },
      betas: ['compact-2026-01-12'],
    });
  });

  test('context editing: clear_tool_uses_20250919 at 100,000 input tokens keeping 3 tool uses, its beta header', () => {
    assert.deepEqual(apiContextManagement(contextOf({ contextManagement: { mode: 'clear-tool-uses' } })), {
      config: {
        edits: [
          {
            type: 'clear_tool_uses_20250919',
            trigger: { type: 'input_tokens', value: 100_000 },
            keep: { type: 'tool_uses', value: 3 },
          },
        ],
      },
      betas: ['context-management-2025-06-27'],
    });
  });

  test('both, with thresholds of their own: clearing first, then compaction', () => {
    const managed = apiContextManagement(
      contextOf({
        tools: ['get_weather'],
        contextManagement: {
          mode: 'both',
          compaction: { triggerTokens: 80_000, instructions: 'Keep every city.' },
          clearToolUses: {
            triggerToolUses: 20,
            keepToolUses: 5,
            clearAtLeastTokens: 5_000,
            excludeTools: ['get_weather'],
            clearToolInputs: true,
          },
        },
      }),
    );
    assert.deepEqual(managed, {
      config: {
        edits: [
          {
            type: 'clear_tool_uses_20250919',
            trigger: { type: 'tool_uses', value: 20 },
            keep: { type: 'tool_uses', value: 5 },
            clear_at_least: { type: 'input_tokens', value: 5_000 },
            exclude_tools: ['get_weather'],
            clear_tool_inputs: true,
          },
          {
            type: 'compact_20260112',
            trigger: { type: 'input_tokens', value: 80_000 },
            instructions: 'Keep every city.',
          },
        ],
      },
      betas: ['context-management-2025-06-27', 'compact-2026-01-12'],
    });
  });

  test("the orchestrator's own compaction sends nothing to the API", () => {
    const context = contextOf({ contextManagement: { mode: 'compaction', compaction: { by: 'orchestrator' } } });
    assert.equal(summarisingItself(context), true);
    assert.equal(apiContextManagement(context), undefined);
  });

  test('what cannot work is refused with the reason', () => {
    assert.throws(
      () => withDefaults({ contextManagement: { mode: 'compaction', compaction: { triggerTokens: 20_000 } } }),
      /contextManagement\.compaction\.triggerTokens: the API compacts at 50000 input tokens or more/,
    );
    // The orchestrator has no such minimum.
    assert.equal(
      contextOf({
        contextManagement: { mode: 'compaction', compaction: { by: 'orchestrator', triggerTokens: 20_000 } },
      }).compaction.triggerTokens,
      20_000,
    );
    assert.throws(
      () => withDefaults({ protocol: 'legacy-xml', contextManagement: { mode: 'both' } }),
      /contextManagement\.mode: clearing tool uses needs the native protocol/,
    );
    assert.throws(
      () => withDefaults({ contextManagement: { clearToolUses: { triggerTokens: 1, triggerToolUses: 1 } } }),
      /give triggerTokens or triggerToolUses, not both/,
    );
    assert.throws(
      () => withDefaults({ contextManagement: { mode: 'summarise' as 'off' } }),
      /contextManagement\.mode: Invalid option/,
    );
  });
});
