// The tenant (Temporal's fairness key, docs/fairness.md) of what a gateway caller starts: its principal, whatever the
// body says, so that a caller cannot take a larger share of a busy task queue by naming a fresh tenant for each
// conversation, or by giving itself a weight. A principal is printable ASCII of up to 128 characters and a fairness
// key at most 64 bytes: a longer one keeps its start and gains a digest of the whole, so two stay apart.
import { createHash } from 'node:crypto';
import { MAX_TENANT_BYTES } from '../common/fairness';

const KEPT_CHARS = 40;

export function tenantOf(principal: string): string {
  if (principal.length <= MAX_TENANT_BYTES) return principal;
  const digest = createHash('sha256').update(principal).digest('hex').slice(0, 16);
  return `${principal.slice(0, KEPT_CHARS)}~${digest}`;
}

/** A start's tenant fields as the gateway sets them: the caller's tenant, and no weight of the caller's choosing. */
export function callerPlacement(principal: string): { tenant: string; tenantWeight: undefined } {
  return { tenant: tenantOf(principal), tenantWeight: undefined };
}
