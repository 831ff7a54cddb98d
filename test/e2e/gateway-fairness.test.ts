// Tenants and priorities through the HTTP gateway (docs/fairness.md): what a caller starts has the caller's principal
// as its tenant, whatever the body says (no weight of its own either), and the priority the body asks for; a message's
// priority is its turn's. A real gateway over a real worker and Temporal dev server; the history says what Temporal got.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { GatewayToken } from '../../gateway/gateway-config';
import { type Gateway, startGateway } from '../../gateway/gateway-server';
import { tenantOf } from '../../gateway/principal-tenant';
import { STOCK_QUESTION, STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { type Harness, namespace, startHarness, uniquePrompt } from '../support/harness';

const ALICE = `alice-token-${randomUUID()}`;
const LONG_PRINCIPAL = `a-principal-whose-name-is-longer-than-a-fairness-key-may-be.${'x'.repeat(40)}`;
const LONG = `long-token-${randomUUID()}`;
const TOKENS: GatewayToken[] = [
  { token: ALICE, principal: 'alice', admin: false },
  { token: LONG, principal: LONG_PRINCIPAL, admin: false },
];

let h: Harness;
let gateway: Gateway;
before(async () => {
  h = await startHarness();
  gateway = await startGateway({ conversations: h.conversations, tokens: TOKENS, namespace });
});
after(async () => {
  await gateway?.close();
  await h?.close();
});

async function post(token: string, path: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as unknown };
}

/** The start's priority and every scheduled activity's, as plain fields (unset ones left out). */
async function priorities(id: string) {
  const history = await h.client.workflow.getHandle(id).fetchHistory();
  const plain = (p: { priorityKey?: number | null; fairnessKey?: string | null; fairnessWeight?: number | null }) => ({
    ...(p.priorityKey ? { priorityKey: p.priorityKey } : {}),
    ...(p.fairnessKey ? { fairnessKey: p.fairnessKey } : {}),
    ...(p.fairnessWeight ? { fairnessWeight: p.fairnessWeight } : {}),
  });
  const events = history.events ?? [];
  return {
    start: plain(events[0]?.workflowExecutionStartedEventAttributes?.priority ?? {}),
    activities: events.flatMap((e) =>
      e.activityTaskScheduledEventAttributes ? [plain(e.activityTaskScheduledEventAttributes.priority ?? {})] : [],
    ),
  };
}

describe('gateway: tenants and priorities', () => {
  test("a start's tenant is the caller's principal, whatever the body says; its priority is the body's", async () => {
    const started = await post(ALICE, '/api/conversations', {
      options: {
        tools: STOCK_TOOLS,
        closeAfterFirstReply: true,
        tenant: 'someone-else',
        tenantWeight: 1000,
        priority: 2,
      },
      message: uniquePrompt(STOCK_QUESTION),
    });
    assert.equal(started.status, 201, JSON.stringify(started.body));
    const { id } = started.body as { id: string };
    await h.conversations.awaitTurn(id, 1);
    const { start, activities } = await priorities(id);
    assert.deepEqual(start, { priorityKey: 2, fairnessKey: 'alice' });
    assert.ok(activities.length > 0);
    for (const activity of activities) assert.deepEqual(activity, { priorityKey: 2, fairnessKey: 'alice' });
  });

  test("a message's priority is its turn's; a principal longer than a fairness key gets a tenant that fits", async () => {
    const id = `gateway-fair-${Date.now()}`;
    const first = await post(LONG, `/api/conversations/${id}/messages`, {
      text: uniquePrompt(STOCK_QUESTION),
      start: { tools: STOCK_TOOLS, priority: 4 },
    });
    assert.equal(first.status, 202, JSON.stringify(first.body));
    await h.conversations.awaitTurn(id, 1);
    const afterFirst = (await priorities(id)).activities.length;
    const second = await post(LONG, `/api/conversations/${id}/messages`, {
      text: uniquePrompt(STOCK_QUESTION),
      priority: 1,
    });
    assert.equal(second.status, 202, JSON.stringify(second.body));
    await h.conversations.awaitTurn(id, 2);
    const tenant = tenantOf(LONG_PRINCIPAL);
    assert.ok(Buffer.byteLength(tenant) <= 64 && tenant.startsWith(LONG_PRINCIPAL.slice(0, 40)), tenant);
    const { start, activities } = await priorities(id);
    assert.deepEqual(start, { priorityKey: 4, fairnessKey: tenant });
    for (const activity of activities.slice(0, afterFirst))
      assert.deepEqual(activity, { priorityKey: 4, fairnessKey: tenant });
    assert.ok(activities.length > afterFirst);
    for (const activity of activities.slice(afterFirst))
      assert.deepEqual(activity, { priorityKey: 1, fairnessKey: tenant });
    await h.conversations.end(id);
  });

  test('a message with a priority of 0 is refused with 400', async () => {
    const refused = await post(ALICE, `/api/conversations/gateway-fair-never-${Date.now()}/messages`, {
      text: 'hi',
      priority: 0,
    });
    assert.equal(refused.status, 400);
    assert.match(JSON.stringify(refused.body), /priority/);
  });
});
