import { z } from 'zod';
import { defineTool, ToolError } from '../../activities/tool-definition';
import { PRICES } from './stock-data';

export const getCurrentStockPrice = defineTool({
  name: 'get_current_stock_price',
  description: 'Gets the current stock price for a company.',
  returns: 'float: the current stock price.',
  raises: ['ValueError: if the input symbol is invalid/unknown.'],
  input: z.object({ symbol: z.string().min(1).describe('The stock symbol of the company to get the price for.') }),
  run({ symbol }) {
    const price = PRICES.get(symbol.trim().toUpperCase());
    if (price === undefined) throw new ToolError('ValueError', `unknown symbol "${symbol}"`);
    return price.toFixed(2);
  },
});
