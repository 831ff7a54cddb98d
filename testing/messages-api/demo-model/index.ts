// A deterministic stand-in for Claude that plays the reference documents' tool-use chain, so the orchestrator can be
// exercised end to end without an API key:
//
//   "What is the current stock price of General Motors?"
//     → get_ticker_symbol({company_name: "General Motors"})        (after a short text, as the docs show)
//     → get_current_stock_price({symbol: "GM"})                   (with the symbol the tool returned)
//     → "The current stock price of General Motors (GM) is $38.50."
//
// and "What's the weather in X?" → get_weather({location: X}) → an answer quoting the result, and "Buy N shares of
// <company>" → buy_stock({symbol, quantity}) (a tool that needs approval) → an answer quoting the order. A tool_result with
// `is_error: true` gets a plain end_turn answer quoting the error. Anything else is echoed ("You said: …").
//
// A coordinator: offered an agent tool (a tool whose one parameter is `task`), a question naming companies is handed
// out, one call of that tool per company in one reply ("Buy N shares of <company>." for the one the question asks to
// buy, "What is the current stock price of <company>?" for the others); their answers are then combined.
//
// Two protocols:
// - native (the request has `tools`): tool_use / tool_result blocks; only offered tools are called; `tool_choice` is
//   honoured (`tool` forces that tool with the best input it can infer, `any` forces some tool, `none` forbids them).
// - legacy XML (no `tools`; the system prompt lists `<tools>`): the same chain written as `<function_calls>` text,
//   reading `<function_results>` from the latest message and answering in `<answer>` tags.
//
// Then the request's limits apply, as the real API applies them: generation stops at the first stop sequence (which
// is not included in the text; `stop_reason: 'stop_sequence'`), or when `max_tokens` runs out (`stop_reason:
// 'max_tokens'`, a tool_use cut off there keeps only a prefix of its input JSON).
//
//   demo-reply.ts               demoReply(body)
//   types.ts, read-request.ts   the request as plain JSON      intent.ts        what a question asks
//   offered-tools.ts            the tools a request offers     plan.ts          call a tool or answer
//   delegate.ts                 a coordinator's sub-agent calls
//   native-turn.ts, legacy-turn.ts   one turn per protocol     apply-limits.ts  stop sequences, max_tokens
export { demoReply } from './demo-reply';
export { firstUserText } from './read-request';
export type { DemoBlock, DemoReply } from './types';
