// Fair sharing between tenants and priorities (docs/fairness.md): a conversation's tenant is Temporal's fairness key
// (with an optional weight), its priority Temporal's priority key. The start gives them to the workflow
// (WorkflowStartOptions.priority); the workflow hands them on to its model and tool activities and its sub-agents, with
// a message's own priority for that turn's. The schemas and the pure arithmetic, workflow-safe: zod and plain functions.
import type { Priority } from '@temporalio/common';
import { z } from 'zod';
import { isWellFormed } from './safe-text';
import { sharedOnce } from './shared-once';
import { utf8Length } from './utf8-length';

/** Temporal refuses a longer fairness key (its Priority message: "limited to 64 bytes"). */
export const MAX_TENANT_BYTES = 64;
/** The server's default priority range: 1 (first) to 5 (last); unset is 3. */
export const MIN_PRIORITY = 1;
export const MAX_PRIORITY = 5;
/** Temporal clamps a fairness weight to this range; outside it a weight would not mean what the caller asked. */
export const MIN_TENANT_WEIGHT = 0.001;
export const MAX_TENANT_WEIGHT = 1_000;

// Control characters (C0, DEL, C1) are what a tenant may not hold.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** A tenant: printable text of 1 to 64 UTF-8 bytes (Temporal's fairness key). */
export const tenantSchema = sharedOnce('fairness.tenantSchema', () =>
  z
    .string({ error: 'a tenant is a string' })
    .min(1, 'a tenant is not empty')
    .max(MAX_TENANT_BYTES, { error: `a tenant has at most ${MAX_TENANT_BYTES} bytes in UTF-8`, abort: true })
    .refine((tenant) => utf8Length(tenant) <= MAX_TENANT_BYTES, {
      error: `a tenant has at most ${MAX_TENANT_BYTES} bytes in UTF-8`,
      abort: true,
    })
    .refine((tenant) => isWellFormed(tenant) && !CONTROL.test(tenant), 'a tenant is printable text'),
);

/** How large a share of the task queue the tenant gets against others (1: an equal share). */
export const tenantWeightSchema = sharedOnce('fairness.tenantWeightSchema', () =>
  z
    .number({ error: 'a tenant weight is a number' }) // zod refuses NaN and ±Infinity as not numbers
    .refine((weight) => weight >= MIN_TENANT_WEIGHT && weight <= MAX_TENANT_WEIGHT, {
      error: `a tenant weight is between ${MIN_TENANT_WEIGHT} and ${MAX_TENANT_WEIGHT}`,
    }),
);

/** A priority: 1 (first) to 5 (last). */
export const prioritySchema = sharedOnce('fairness.prioritySchema', () =>
  z
    .number({ error: 'a priority is a number' })
    .int(`a priority is a whole number from ${MIN_PRIORITY} (first) to ${MAX_PRIORITY} (last)`)
    .min(MIN_PRIORITY, `a priority is from ${MIN_PRIORITY} (first) to ${MAX_PRIORITY} (last)`)
    .max(MAX_PRIORITY, `a priority is from ${MIN_PRIORITY} (first) to ${MAX_PRIORITY} (last)`),
);

/** What a start may say about a conversation's place in the task queue. */
export interface Placement {
  tenant?: string | undefined;
  tenantWeight?: number | undefined;
  priority?: number | undefined;
}

/** Temporal's Priority for a start's placement; undefined when it says nothing (the server's defaults). */
export function startPriority({ tenant, tenantWeight, priority }: Placement): Priority | undefined {
  const result: Priority = {
    ...(priority !== undefined && { priorityKey: priority }),
    ...(tenant !== undefined && { fairnessKey: tenant }),
    ...(tenant !== undefined && tenantWeight !== undefined && { fairnessWeight: tenantWeight }),
  };
  return Object.keys(result).length > 0 ? result : undefined;
}

/**
 * The Priority a turn's activities and sub-agents get: the workflow's own (its start's, as `workflowInfo().priority`
 * has it, where 0 and '' mean unset) with the turn's message's priority in place of its priority key. Undefined when
 * there is nothing to say: the task then carries no priority, as before this existed, and inherits the workflow's.
 */
export function taskPriority(workflow: Priority | undefined, turnPriority?: number): Priority | undefined {
  const priorityKey = turnPriority ?? positive(workflow?.priorityKey);
  const fairnessKey = workflow?.fairnessKey || undefined;
  const fairnessWeight = fairnessKey !== undefined ? positive(workflow?.fairnessWeight) : undefined;
  const result: Priority = {
    ...(priorityKey !== undefined && { priorityKey }),
    ...(fairnessKey !== undefined && { fairnessKey }),
    ...(fairnessWeight !== undefined && { fairnessWeight }),
  };
  return Object.keys(result).length > 0 ? result : undefined;
}

function positive(value: number | null | undefined): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}
