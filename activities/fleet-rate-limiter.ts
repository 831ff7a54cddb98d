// A worker's side of the fleet's rate limits (docs/rate-limits.md): a model call reserves its cost with the scope's
// limiter workflow (workflows/rate-limiter.ts) through an update-with-start, so the first call of a fleet starts it,
// and reports each response's headers and usage with a signal. The limiter is an aid, never a new way to fail: when
// it cannot be reached in time the call goes on as it would without it, and a report that fails is dropped.
import { createHash } from 'node:crypto';
import { log } from '@temporalio/activity';
import { type Client, WithStartWorkflowOperation } from '@temporalio/client';
import { observeSignal, RATE_LIMITER_WORKFLOW, rateLimiterId, reserveUpdate } from '../common/rate-limiter-messages';
import type { Observation, RateAmounts, ReserveAnswer } from '../common/rate-limits';
import { capsOf, fleetLimits, type HeaderReading, type RateLimitSettings } from './rate-limit-headers';

/** A reservation that takes longer than this is given up (the call goes without waiting). */
const RESERVE_TIMEOUT_MS = 10_000;

export interface FleetRateLimiterOptions extends RateLimitSettings {
  /** The limiter's scope: the workers that share one organisation's limits (scopeOf). */
  scope: string;
  /** Where the limiter workflow runs: the worker's own task queue (it registers the workflow). */
  taskQueue: string;
  /** The worker's client (the activity context's, or the worker's). */
  client: () => Client;
}

/** The scope of an API's URL and key: a short digest, never the key itself. */
export function scopeOf(baseUrl: string | undefined, apiKey: string | undefined): string {
  return createHash('sha256')
    .update(`${baseUrl ?? 'https://api.anthropic.com'}\n${apiKey ?? ''}`)
    .digest('hex')
    .slice(0, 16);
}

export type Reserved = ReserveAnswer & { readyAt: number };

export class FleetRateLimiter {
  readonly workflowId: string;
  /**
   * The models this process knows to be limited: configured caps, or a response's rate-limit headers seen. Until then
   * a call neither reserves nor reports (an API that sends no such headers, like the local one without limits, costs
   * nothing); the first response that names limits turns it on for its model, and the limiter learns them from it.
   */
  private readonly limited = new Set<string>();

  constructor(private readonly options: FleetRateLimiterOptions) {
    this.workflowId = rateLimiterId(options.scope);
  }

  /**
   * Reserves `cost` for the request `key` names (asking again with the same key gets the same reservation); the
   * update's own id also names the attempt that asks. Undefined when the limiter did not answer in time.
   */
  async reserve(key: string, attempt: number, model: string, cost: RateAmounts): Promise<Reserved | undefined> {
    const caps = capsOf(this.options, model);
    if (!caps && !this.limited.has(model)) return undefined;
    const request = { key, model, cost, ...(caps && { caps }) };
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        this.options.client().workflow.executeUpdateWithStart(reserveUpdate, {
          args: [request],
          updateId: `${key}#${attempt}`,
          startWorkflowOperation: this.startOperation(),
        }),
        new Promise<undefined>((resolve) => {
          timer = setTimeout(() => resolve(undefined), RESERVE_TIMEOUT_MS);
        }),
      ]);
    } catch (err) {
      log.warn('The rate limiter could not be asked: the call goes without waiting', { error: String(err) });
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Reports what a response said; never fails the call. */
  report(model: string, key: string | undefined, reading: HeaderReading | undefined, usage?: RateAmounts): void {
    if (reading?.limits || reading?.retryAfterMs !== undefined) this.limited.add(model);
    else if (!this.limited.has(model) && !capsOf(this.options, model)) return; // nothing limits this model
    const seen: Observation = {
      model,
      ...(key !== undefined && { key }),
      ...(reading?.limits && { limits: fleetLimits(reading.limits, this.options, model) }),
      ...(reading?.remaining && { remaining: reading.remaining }),
      ...(reading?.retryAfterMs !== undefined && { retryAfterMs: reading.retryAfterMs }),
      ...(usage && { usage }),
    };
    if (Object.keys(seen).length <= 2 && !seen.usage) return; // nothing learned
    this.options
      .client()
      .workflow.signalWithStart(RATE_LIMITER_WORKFLOW, {
        workflowId: this.workflowId,
        taskQueue: this.options.taskQueue,
        signal: observeSignal,
        signalArgs: [seen],
      })
      .catch((err: unknown) => log.warn('A rate-limit report was dropped', { error: String(err) }));
  }

  private startOperation() {
    const operation = new WithStartWorkflowOperation(RATE_LIMITER_WORKFLOW, {
      workflowId: this.workflowId,
      taskQueue: this.options.taskQueue,
      workflowIdConflictPolicy: 'USE_EXISTING',
      args: [],
    });
    // Its handle is not used: a failed start rejects the update already, and must not also reject unhandled.
    operation.workflowHandle().catch(() => undefined);
    return operation;
  }
}
