// The tools this project ships. Adding a tool: write its file next to these and list it here.
import type { ToolDefinition } from '../tool-definition';
import { buyStock } from './buy-stock';
import { getCurrentStockPrice } from './get-current-stock-price';
import { getTickerSymbol } from './get-ticker-symbol';
import { getWeather } from './get-weather';

export const builtinTools: ToolDefinition[] = [getTickerSymbol, getCurrentStockPrice, getWeather, buyStock] as ToolDefinition[];
