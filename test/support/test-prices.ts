// The prices the cost and budget tests set on their conversations (the `prices` option), so that every figure they
// assert is worked out from one table: USD per million tokens, Sonnet 4.x's published rates.
import type { ModelPrices } from '../../common/pricing';

export const PRICES: ModelPrices = { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3 };
