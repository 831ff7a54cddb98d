// The prices the cost and budget tests set on their conversations (the `prices` option), so that every figure they
// assert is worked out from one table: USD per million tokens, Sonnet 4.x's published rates.
import type { ModelPrices } from '../../common/pricing';
import type { TokenUsage } from '../../common/usage';
import type { ScriptUsage } from '../../testing/messages-api/types';

export const PRICES: ModelPrices = { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3 };

/** A scripted reply's usage (the API's names, every count set) as the conversation counts it, to price it. */
export const usageOf = (u: ScriptUsage): TokenUsage => ({
  inputTokens: u.input_tokens!,
  outputTokens: u.output_tokens!,
  cacheCreationInputTokens: u.cache_creation_input_tokens!,
  cacheReadInputTokens: u.cache_read_input_tokens!,
});
