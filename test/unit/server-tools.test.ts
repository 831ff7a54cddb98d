// Server tools' pure parts: the option's checks, the request's tools (server tools first, deferred tools marked, the
// cache breakpoint on the last tool in the prompt), the name patterns, server tool blocks kept in place only when the
// call offered server tools, a paused turn joined by its continuation, usage priced per web search, the events; and
// the local Messages API's emulation (usage, container issued and expected back, the 400s).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { buildModelRequest } from '../../activities/model-request';
import { withDefaults } from '../../common/options';
import { joinPausedTurn, withReply } from '../../common/paused-turn';
import { costUsd, WEB_SEARCH_USD_PER_1000 } from '../../common/pricing';
import { nativeProtocol } from '../../common/protocols/native';
import { serverToolEvent } from '../../streaming/workflow/server-tool-events';
import { isDeferred, matchesToolPattern, serverToolParams, serverToolsNote } from '../../common/server-tools';
import { addUsage, ZERO_USAGE } from '../../common/usage';
import { clientFor, withMessagesApi } from '../../testing/messages-api/sdk-client';

const TOOL = (name: string) => ({ name, description: `the ${name} tool`, input_schema: { type: 'object' as const } });

describe('server tools: options', () => {
  test('options: each tool, the defaults of tool search', () => {
    const options = withDefaults({ tools: ['a'], serverTools: { webSearch: {}, toolSearch: {} } });
    assert.deepEqual(options.serverTools?.toolSearch, { type: 'regex', defer: ['*'] });
  });
  test('options: legacy-xml, both domain filters and tool search with nothing to search are refused', () => {
    assert.throws(() => withDefaults({ protocol: 'legacy-xml', serverTools: { webSearch: {} } }), /native protocol/);
    assert.throws(
      () => withDefaults({ serverTools: { webFetch: { allowedDomains: ['a.com'], blockedDomains: ['b.com'] } } }),
      /cannot be used together/,
    );
    assert.throws(() => withDefaults({ serverTools: { toolSearch: {} } }), /tools to search/);
  });
  test('the request tools as the API names them', () => {
    const params = serverToolParams({
      webSearch: { maxUses: 2, userLocation: { country: 'FR' } },
      webFetch: { citations: true },
      codeExecution: {},
      toolSearch: { type: 'bm25', defer: ['*'] },
    });
    assert.deepEqual(params, [
      {
        type: 'web_search_20250305',
        name: 'web_search',
        max_uses: 2,
        user_location: { type: 'approximate', country: 'FR' },
      },
      { type: 'web_fetch_20250910', name: 'web_fetch', citations: { enabled: true } },
      { type: 'code_execution_20250825', name: 'code_execution' },
      { type: 'tool_search_tool_bm25_20251119', name: 'tool_search_tool_bm25' },
    ]);
    assert.equal(serverToolsNote({ webFetch: {}, codeExecution: {} }), ' · server tools web_fetch, code_execution');
    assert.equal(serverToolsNote(undefined), '');
  });
  test('patterns: * is any run of characters, nothing else is special, linear on long names', () => {
    assert.ok(matchesToolPattern('tickets__search', ['tickets__*']));
    assert.ok(matchesToolPattern('a_b_c', ['a*c', 'x']));
    assert.ok(matchesToolPattern('abc', ['*']));
    assert.ok(!matchesToolPattern('abc', ['a*d']));
    assert.ok(!matchesToolPattern('ab', ['ab*b']));
    assert.ok(matchesToolPattern('abab', ['a*b*b']));
    // CPU time, not wall time (a loaded machine only stretches the latter): backtracking would take minutes here.
    const started = process.cpuUsage();
    assert.ok(!matchesToolPattern('a'.repeat(64), ['*a*a*a*a*a*a*a*a*a*a*a*b']));
    const { user, system } = process.cpuUsage(started);
    assert.ok((user + system) / 1000 < 200, `${(user + system) / 1000} ms of CPU`);
    assert.ok(!isDeferred('x', undefined));
    assert.ok(isDeferred('get_x', { toolSearch: { type: 'regex', defer: ['get_*'] } }));
  });
});

describe('server tools: the request', () => {
  const base = { model: 'm', maxTokens: 100, protocol: 'native' as const, tools: [], promptCaching: true };
  const messages: MessageParam[] = [{ role: 'user', content: 'hi' }];
  test('server tools first, deferred tools marked, the breakpoint on the last tool in the prompt, the container', () => {
    const request = buildModelRequest(
      { ...base, serverTools: { toolSearch: { type: 'regex', defer: ['b*'] } }, container: 'container_1' },
      messages,
      [TOOL('a'), TOOL('b1'), TOOL('b2')],
    );
    assert.deepEqual(
      request.tools?.map((t) => [(t as { name: string }).name, 'defer_loading' in t, 'cache_control' in t]),
      [
        ['tool_search_tool_regex', false, false],
        ['a', false, true],
        ['b1', true, false],
        ['b2', true, false],
      ],
    );
    assert.equal(request.container, 'container_1');
  });
  test('the answer tool of a typed answer in mode tool is never deferred', () => {
    const request = buildModelRequest(
      {
        ...base,
        serverTools: { toolSearch: { type: 'regex', defer: ['*'] } },
        output: { schema: { type: 'object' }, mode: 'tool', toolName: 'final_answer' },
      },
      messages,
      [TOOL('a')],
    );
    const last = request.tools!.at(-1)!;
    assert.ok(!('defer_loading' in last), JSON.stringify(last));
    assert.ok('cache_control' in last);
  });
  test('without server tools the request is what it was', () => {
    const request = buildModelRequest(base, messages, [TOOL('a')]);
    assert.deepEqual(
      request.tools?.map((t) => Object.keys(t).sort()),
      [['cache_control', 'description', 'input_schema', 'name']],
    );
    assert.equal('container' in request, false);
  });
});

describe('server tools: the reply', () => {
  const reply = {
    content: [
      {
        type: 'server_tool_use',
        id: 'srvtoolu_1',
        name: 'web_search',
        input: { query: 'q' },
        caller: { type: 'direct' },
      },
      { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [{ type: 'web_search_result', url: 'u' }] },
      { type: 'text', text: 'found', citations: null },
    ],
    stop_reason: 'pause_turn',
  } as never;
  test('blocks kept in place when the call offered server tools, caller direct and nulls dropped', () => {
    const read = nativeProtocol.readReply(reply, 1, new Set(), { serverTools: true });
    assert.deepEqual(read.assistant.content, [
      { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'q' } },
      { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [{ type: 'web_search_result', url: 'u' }] },
      { type: 'text', text: 'found' },
    ]);
    assert.equal(read.stopReason, 'pause_turn');
    assert.deepEqual(read.toolCalls, []);
  });
  test('left out when it did not (only a proxy sends them then), and malformed ones always', () => {
    const read = nativeProtocol.readReply(reply, 1, new Set());
    assert.deepEqual(read.assistant.content, [{ type: 'text', text: 'found' }]);
    const malformed = nativeProtocol.readReply(
      {
        content: [{ type: 'server_tool_use', name: 'web_search' }, { type: 'web_fetch_tool_result' }],
        stop_reason: 'end_turn',
      } as never,
      1,
      new Set(),
      { serverTools: true },
    );
    assert.deepEqual(malformed.assistant.content, []);
  });
  test('a paused turn: its continuation joins its message', () => {
    const paused: MessageParam = { role: 'assistant', content: [{ type: 'text', text: 'a' }] };
    const next: MessageParam = { role: 'assistant', content: [{ type: 'text', text: 'b' }] };
    const user: MessageParam = { role: 'user', content: 'q' };
    assert.deepEqual(joinPausedTurn(paused, next).content, [
      { type: 'text', text: 'a' },
      { type: 'text', text: 'b' },
    ]);
    assert.deepEqual(withReply([user, paused], { reply: next, joinsPausedTurn: true, stopReason: 'end_turn' }), [
      user,
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
    ]);
    assert.deepEqual(
      withReply([user, paused], { reply: next, joinsPausedTurn: false, stopReason: 'end_turn' }),
      [user, paused, next],
      'histories from before',
    );
    assert.deepEqual(
      withReply([user], { reply: next, joinsPausedTurn: true, stopReason: 'end_turn' }),
      [user, next],
      'nothing paused: it follows',
    );
  });
  test('usage: searches and fetches summed, absent when none; a search priced per 1,000', () => {
    const a = { ...ZERO_USAGE, webSearchRequests: 2 };
    const b = { ...ZERO_USAGE, webFetchRequests: 1 };
    assert.deepEqual(addUsage(a, b), { ...ZERO_USAGE, webSearchRequests: 2, webFetchRequests: 1 });
    assert.deepEqual(addUsage(ZERO_USAGE, ZERO_USAGE), ZERO_USAGE);
    const prices = { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3 };
    assert.equal(costUsd(a, prices), (2 * WEB_SEARCH_USD_PER_1000) / 1000);
    assert.equal(costUsd(a, { ...prices, webSearchPer1000: 5 }), 0.01);
    assert.equal(costUsd(b, prices), 0, 'a fetch costs its tokens only');
  });
  test('events: a call with its input, a result with its error code', () => {
    assert.deepEqual(serverToolEvent({ type: 'server_tool_use', id: 's1', name: 'web_fetch', input: { url: 'u' } }), {
      type: 'server_tool_call',
      id: 's1',
      name: 'web_fetch',
      input: { url: 'u' },
    });
    assert.deepEqual(
      serverToolEvent({
        type: 'web_fetch_tool_result',
        tool_use_id: 's1',
        content: { type: 'web_fetch_tool_result_error', error_code: 'url_not_accessible' },
      }),
      { type: 'server_tool_result', toolUseId: 's1', name: 'web_fetch', error: 'url_not_accessible' },
    );
    assert.equal(serverToolEvent({ type: 'text', text: 'x' }), undefined);
  });
});

describe('local Messages API: server tools', () => {
  const user = { role: 'user' as const, content: 'run code [srv]' };
  const code = { type: 'code_execution_20250825', name: 'code_execution' } as const;

  test('usage.server_tool_use, and a container issued with code execution, expected back once code ran', () =>
    withMessagesApi(async (server) => {
      const client = clientFor(server);
      server.script('[srv]', [
        {
          reply: {
            content: [
              { type: 'server_tool_use', name: 'web_search', input: { query: 'q' } },
              { type: 'web_search_tool_result', content: [] },
              { type: 'server_tool_use', name: 'bash_code_execution', input: { command: 'ls' } },
              {
                type: 'bash_code_execution_tool_result',
                content: { type: 'bash_code_execution_result', stdout: '', stderr: '', return_code: 0, content: [] },
              },
            ],
            stop_reason: 'end_turn',
          },
        },
      ]);
      const tools = [{ type: 'web_search_20250305', name: 'web_search' } as const, code];
      const stream = client.messages.stream({ model: 'm', max_tokens: 100, messages: [user], tools });
      const message = await stream.finalMessage();
      assert.deepEqual(message.usage.server_tool_use, { web_search_requests: 1, web_fetch_requests: 0 });
      assert.match(message.container?.id ?? '', /^container_/);
      assert.equal(
        (message.content[1] as { tool_use_id?: string }).tool_use_id,
        (message.content[0] as { id: string }).id,
      );
      const back = [
        user,
        { role: 'assistant' as const, content: message.content },
        { role: 'user' as const, content: 'again' },
      ];
      await assert.rejects(
        client.messages.create({ model: 'm', max_tokens: 100, messages: back, tools: [code] }),
        /send its id back as `container`/,
      );
      await assert.rejects(
        client.messages.create({
          model: 'm',
          max_tokens: 100,
          messages: back,
          tools: [code],
          container: 'container_forged',
        }),
        /Container 'container_forged' not found/,
      );
      const again = await client.messages.create({
        model: 'm',
        max_tokens: 100,
        messages: back,
        tools: [code],
        container: message.container!.id,
      });
      assert.equal(again.container?.id, message.container!.id);
    }));

  test('the 400s: an unknown type, a wrong name, both domain filters, deferred tools without search or all deferred, a reference to no tool', () =>
    withMessagesApi(async (server) => {
      const client = clientFor(server);
      const ask = (tools: unknown[], messages: unknown[] = [user]) =>
        client.messages.create({ model: 'm', max_tokens: 100, messages, tools } as never);
      const custom = { name: 'a', input_schema: { type: 'object' } };
      await assert.rejects(
        ask([{ type: 'web_search_20990101', name: 'web_search' }]),
        /Input tag 'web_search_20990101'/,
      );
      await assert.rejects(
        ask([{ type: 'web_search_20250305', name: 'search' }]),
        /name: Input should be 'web_search'/,
      );
      await assert.rejects(
        ask([{ type: 'web_fetch_20250910', name: 'web_fetch', allowed_domains: ['a'], blocked_domains: ['b'] }]),
        /both allowed_domains and blocked_domains/,
      );
      await assert.rejects(ask([{ ...custom, defer_loading: true }]), /require a tool search tool/);
      await assert.rejects(
        ask([
          { type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex', defer_loading: true },
          { ...custom, defer_loading: true },
        ]),
        /cannot be deferred/,
      );
      const search = { type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' };
      const referring = [
        user,
        {
          role: 'assistant',
          content: [
            { type: 'server_tool_use', id: 'srvtoolu_1', name: 'tool_search_tool_regex', input: { query: 'x' } },
            {
              type: 'tool_search_tool_result',
              tool_use_id: 'srvtoolu_1',
              content: {
                type: 'tool_search_tool_search_result',
                tool_references: [{ type: 'tool_reference', tool_name: 'nope' }],
              },
            },
          ],
        },
        { role: 'user', content: 'go on' },
      ];
      await assert.rejects(
        ask([search, { ...custom, defer_loading: true }], referring),
        /Tool reference 'nope' has no corresponding tool definition/,
      );
      const ok = await ask([search, custom, { ...custom, name: 'b', defer_loading: true }]);
      assert.equal(ok.type, 'message');
    }));
});
