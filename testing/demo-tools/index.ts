// The demo's tools: the reference documents' stock-price chain (and a weather tool, and an order that needs
// approval). The local Messages API server's demo model plays the chain with exactly these.
import type { ToolDefinition } from '../../activities/tool-definition';
import { buyStock } from './buy-stock';
import { getCurrentStockPrice } from './get-current-stock-price';
import { getTickerSymbol } from './get-ticker-symbol';
import { getWeather } from './get-weather';

export const demoTools: ToolDefinition[] = [
  getTickerSymbol,
  getCurrentStockPrice,
  getWeather,
  buyStock,
] as ToolDefinition[];
