import { z } from 'zod';
import { defineTool, ToolError } from '../../activities/tool-definition';
import { TICKERS } from './stock-data';

export const getTickerSymbol = defineTool({
  name: 'get_ticker_symbol',
  description: 'Gets the stock ticker symbol for a company searched by name.',
  returns: "str: the ticker symbol of the company's stock.",
  raises: ['TickerNotFound: if no matching ticker symbol is found.'],
  input: z.object({ company_name: z.string().min(1).describe('The name of the company.') }),
  run({ company_name }) {
    const symbol = TICKERS.get(
      company_name
        .trim()
        .toLowerCase()
        .replace(/[,.]|\b(inc|corp|corporation|company|co)\b/g, '')
        .trim(),
    );
    if (!symbol) throw new ToolError('TickerNotFound', `no ticker for "${company_name}"`);
    return symbol;
  },
});
