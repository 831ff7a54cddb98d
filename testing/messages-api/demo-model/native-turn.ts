// The native protocol's turn: tool_use / tool_result blocks, only offered tools, `tool_choice` honoured.
import { intentOf, symbolFrom } from './intent';
import { type Context, inferInput, nativeTools, schemaInfo } from './offered-tools';
import { type Outcome, type Plan, planAfterResults, planQuestion } from './plan';
import { blocksOf, firstUserText, isObject, lastIndexOfRole, messagesOf, textOf } from './read-request';
import type { DemoBlock, Json, Message } from './types';

function toolResultText(block: Json): string {
  return textOf(block['content']);
}

/** The company the conversation is about: the last get_ticker_symbol call's input, or the first question. */
function conversationCompany(messages: Message[], body: Json): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    for (const block of blocksOf(messages[i])) {
      if (block['type'] === 'tool_use' && block['name'] === 'get_ticker_symbol' && isObject(block['input'])) {
        const value = Object.values(block['input']).find((v): v is string => typeof v === 'string');
        if (value) return value;
      }
    }
  }
  const intent = intentOf(firstUserText(body));
  return intent.kind === 'stock' ? intent.company : undefined;
}

export function nativeTurn(body: Json): DemoBlock[] {
  const tools = nativeTools(body);
  const messages = messagesOf(body);
  const userIndex = lastIndexOfRole(messages, 'user');
  const user = messages[userIndex];
  const results = blocksOf(user).filter((b) => b['type'] === 'tool_result');
  const question = textOf(user?.content ?? '');

  let plan: Plan;
  const context: Context = { text: question || firstUserText(body) };
  if (results.length > 0) {
    const calls = new Map<string, Json>();
    for (const block of blocksOf(messages[userIndex - 1])) {
      if (block['type'] === 'tool_use') calls.set(String(block['id']), block);
    }
    const outcomes: Outcome[] = results.map((result) => {
      const call = calls.get(String(result['tool_use_id']));
      return {
        name: typeof call?.['name'] === 'string' ? call['name'] : 'tool',
        input: isObject(call?.['input']) ? call['input'] : {},
        text: toolResultText(result),
        isError: result['is_error'] === true,
      };
    });
    const company = conversationCompany(messages, body);
    plan = planAfterResults(outcomes, tools, company);
    context.company = company;
    const ticker = outcomes.find((o) => o.name === 'get_ticker_symbol' && !o.isError);
    if (ticker) context.symbol = symbolFrom(ticker.text);
    const priced = outcomes.find((o) => o.name === 'get_current_stock_price' && !o.isError);
    if (priced) {
      const price = Number.parseFloat(priced.text);
      if (Number.isFinite(price)) context.price = price;
      context.symbol ??= Object.values(priced.input).find((v): v is string => typeof v === 'string');
    }
  } else {
    plan = planQuestion(question, tools);
    const intent = intentOf(question);
    if (intent.kind === 'stock') context.company = intent.company;
    if (intent.kind === 'weather') context.location = intent.location;
  }

  const choice = isObject(body['tool_choice']) ? body['tool_choice'] : { type: 'auto' };
  switch (choice['type']) {
    case 'none':
      if (plan.kind === 'call')
        plan = { kind: 'answer', text: `I can't answer that without using the ${plan.name} tool.` };
      break;
    case 'tool': {
      const forced = tools.get(String(choice['name']));
      if (forced && !(plan.kind === 'call' && plan.name === forced.name)) {
        const answer = plan.kind === 'answer' ? { answer: plan.text } : {};
        plan = { kind: 'call', name: forced.name, input: inferInput(forced, { ...context, ...answer }) };
      }
      if (plan.kind === 'call') delete plan.more; // a forced tool is called once
      if (plan.kind === 'call') delete plan.preface; // a forced call comes without text, as the API prefills it
      break;
    }
    case 'any': {
      // Made to call a tool when it would answer: an answer tool if one is offered (typed answers), else the first.
      const tool = [...tools.values()].find((t) => /answer/i.test(t.name)) ?? tools.values().next().value;
      if (plan.kind === 'answer' && tool) {
        plan = { kind: 'call', name: tool.name, input: inferInput(tool, { ...context, answer: plan.text }) };
      }
      if (plan.kind === 'call') delete plan.preface;
      break;
    }
    default:
      break;
  }

  if (plan.kind === 'answer') {
    // Structured outputs: the answer as JSON matching the format's schema, filled from the conversation.
    const format = isObject(body['output_config']) ? body['output_config']['format'] : undefined;
    const schema = isObject(format) && isObject(format['schema']) ? format['schema'] : undefined;
    if (!schema) return [{ type: 'text', text: plan.text }];
    return [
      {
        type: 'text',
        text: JSON.stringify(inferInput(schemaInfo('answer', schema), { ...context, answer: plan.text })),
      },
    ];
  }
  const blocks: DemoBlock[] = [];
  if (plan.preface) blocks.push({ type: 'text', text: plan.preface });
  blocks.push({ type: 'tool_use', name: plan.name, input: plan.input });
  for (const call of plan.more ?? []) blocks.push({ type: 'tool_use', name: call.name, input: call.input });
  return blocks;
}
