// The gateway's `?agents=` (which sub-agents' events an event stream carries, issue #33) under hostile values: anything
// but steps, all or none is a clear 400 that does not quote the value, before any stream opens.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Gateway, startGateway } from '../../gateway/gateway-server';
import { type Harness, namespace, startHarness } from '../support/harness';

const TOKEN = 'gateway-agents-param-token-0123456789';
const MARKER = 'SECRET-CALLER-TEXT-4711';
let h: Harness;
let gateway: Gateway;
before(async () => {
  h = await startHarness();
  gateway = await startGateway({ conversations: h.conversations, token: TOKEN, namespace });
});
after(async () => {
  await gateway?.close();
  await h?.close();
});

test('?agents= other than steps, all or none is 400 invalid_request that does not quote it', async () => {
  const id = `agents-param-${Date.now()}`;
  const values = ['', 'STEPS', 'steps%20', 'everything', MARKER, MARKER.repeat(100), '%00', 'steps%00', '%E2%80%AE'];
  for (const value of values) {
    const response = await fetch(`${gateway.url}/api/conversations/${id}/events?agents=${value}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const text = await response.text();
    assert.equal(response.status, 400, `agents=${value.slice(0, 40)}: ${response.status} ${text.slice(0, 200)}`);
    const { error } = JSON.parse(text) as { error: { code: string; message: string } };
    assert.equal(error.code, 'invalid_request');
    assert.match(error.message, /agents must be steps, all or none/);
    assert.ok(!text.includes(MARKER) && text.length < 1_000, text.slice(0, 200));
  }
});
