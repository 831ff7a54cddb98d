// The pure arithmetic of tenants and priorities (common/fairness.ts): what a start gives Temporal, and what a turn's
// activities and sub-agents are given from the workflow's own Priority (where 0 and '' mean unset) and the turn's.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { prioritySchema, startPriority, taskPriority, tenantSchema, tenantWeightSchema } from '../../common/fairness';

describe('startPriority', () => {
  test('nothing given: no Priority at all (the server defaults)', () => {
    assert.equal(startPriority({}), undefined);
  });
  test('tenant, weight and priority become the fairness key, weight and priority key', () => {
    assert.deepEqual(startPriority({ tenant: 'acme', tenantWeight: 2, priority: 1 }), {
      priorityKey: 1,
      fairnessKey: 'acme',
      fairnessWeight: 2,
    });
  });
  test('a weight without a tenant says nothing (the client refuses it before)', () => {
    assert.deepEqual(startPriority({ tenantWeight: 2, priority: 5 }), { priorityKey: 5 });
  });
});

describe('taskPriority', () => {
  test("the workflow's Priority as workflowInfo gives it, unset fields (0, '') left out", () => {
    assert.deepEqual(taskPriority({ priorityKey: 0, fairnessKey: 'acme', fairnessWeight: 0 }), { fairnessKey: 'acme' });
    assert.equal(taskPriority({ priorityKey: 0, fairnessKey: '', fairnessWeight: 0 }), undefined);
    assert.equal(taskPriority(undefined), undefined);
  });
  test("the turn's priority replaces the workflow's priority key and keeps its tenant and weight", () => {
    assert.deepEqual(taskPriority({ priorityKey: 4, fairnessKey: 'acme', fairnessWeight: 3 }, 1), {
      priorityKey: 1,
      fairnessKey: 'acme',
      fairnessWeight: 3,
    });
    assert.deepEqual(taskPriority(undefined, 2), { priorityKey: 2 });
  });
  test('a weight without a fairness key is dropped (it would weigh the empty key)', () => {
    assert.deepEqual(taskPriority({ priorityKey: 3, fairnessKey: '', fairnessWeight: 5 }), { priorityKey: 3 });
  });
});

describe('the schemas', () => {
  test('a tenant of exactly 64 UTF-8 bytes passes; 65, or 64 characters of more bytes, does not', () => {
    assert.ok(tenantSchema.safeParse('a'.repeat(64)).success);
    assert.ok(!tenantSchema.safeParse('a'.repeat(65)).success);
    assert.ok(tenantSchema.safeParse('€'.repeat(21)).success); // 63 bytes
    assert.ok(!tenantSchema.safeParse('€'.repeat(22)).success); // 66 bytes in 22 characters
    assert.ok(!tenantSchema.safeParse('tab\there').success);
  });
  test('weights from 0.001 to 1000; priorities 1 to 5, whole', () => {
    for (const ok of [0.001, 1, 1000]) assert.ok(tenantWeightSchema.safeParse(ok).success, String(ok));
    for (const bad of [0, 0.0009, 1000.5, -1, NaN, Infinity]) assert.ok(!tenantWeightSchema.safeParse(bad).success);
    for (const ok of [1, 3, 5]) assert.ok(prioritySchema.safeParse(ok).success, String(ok));
    for (const bad of [0, 6, 2.5, -1, NaN]) assert.ok(!prioritySchema.safeParse(bad).success, String(bad));
  });
});
