import { z } from 'zod';
import { defineTool, ToolError } from '../../activities/tool-definition';
import { PRICES } from './stock-data';

/** A tool with a side effect: it needs a person's approval, and uses the idempotency key as the order id. */
export const buyStock = defineTool({
  name: 'buy_stock',
  description: "Places a market order to buy shares of a stock. Needs the user's approval.",
  returns: 'str: the order confirmation with its id and total cost.',
  raises: ['ValueError: if the symbol is unknown.'],
  input: z.object({
    symbol: z.string().min(1).describe('The stock symbol, e.g. GM'),
    quantity: z.number().int().positive().max(10_000).describe('How many shares to buy'),
  }),
  requiresApproval: true,
  run({ symbol, quantity }, { idempotencyKey }) {
    const price = PRICES.get(symbol.toUpperCase());
    if (price === undefined) throw new ToolError('ValueError', `unknown symbol "${symbol}"`);
    return `Order ${idempotencyKey} filled: ${quantity} ${symbol.toUpperCase()} at ${price.toFixed(2)} = ${(price * quantity).toFixed(2)}`;
  },
});
