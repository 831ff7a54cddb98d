// The inputs of a model request that unit tests build again and again: the demo's two stock tools as the model sees
// them, and plain native request options (no tools offered by the options themselves, prompt caching on).
import { describeTool } from '../../activities/tool-definition';
import type { ModelRequestOptions } from '../../common/activity-contracts';
import { getCurrentStockPrice } from '../../testing/demo-tools/get-current-stock-price';
import { getTickerSymbol } from '../../testing/demo-tools/get-ticker-symbol';

export const STOCK_TOOL_DESCRIPTIONS = [getTickerSymbol, getCurrentStockPrice].map(describeTool);

export const NATIVE_REQUEST_OPTIONS: ModelRequestOptions = {
  model: 'claude-sonnet-5-5',
  maxTokens: 1024,
  protocol: 'native',
  tools: [],
  promptCaching: true,
};
