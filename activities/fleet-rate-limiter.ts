// A worker's side of the fleet's rate limits (docs/rate-limits.md): a model call reserves its cost with the scope's
// limiter workflow (workflows/rate-limiter.ts) through an update-with-start, so the first call of a fleet starts it,
// and reports each response's headers and usage with a signal. A process sends its calls' reservations, and their
// reports, in batches with one on its way at a time (Temporal takes only a few updates in flight per workflow). The
// limiter is an aid, never a new way to fail: when it cannot be reached in time the call goes on as it would without
// it, and a report that fails is dropped.
import { createHash } from 'node:crypto';
import { log } from '@temporalio/activity';
import { type Client, WithStartWorkflowOperation } from '@temporalio/client';
import { observeSignal, RATE_LIMITER_WORKFLOW, rateLimiterId, reserveUpdate } from '../common/rate-limiter-messages';
import {
  MAX_BATCH,
  type Observation,
  type RateAmounts,
  type ReserveAnswer,
  type ReserveRequest,
} from '../common/rate-limits';
import { MIN_PRIORITY } from '../common/fairness';
import { BatchedSender } from './batched-sender';
import { capsOf, fleetLimits, type HeaderReading, type RateLimitSettings } from './rate-limit-headers';

/** A reservation that takes longer than this is given up (the call goes without waiting). */
const RESERVE_TIMEOUT_MS = 10_000;
/** How long a call waits for the first call of a model to learn whether the model is limited. */
export const PROBE_WAIT_MS = 5_000;
/**
 * The limiter's workflow tasks go first on the shared task queue: a reservation must not wait behind the backlog of
 * the very conversations it paces (a server without task-queue priority ignores it).
 */
const LIMITER_PRIORITY = { priorityKey: MIN_PRIORITY };
/** Models this process remembers (the least recently learned goes first). */
const MAX_KNOWN_MODELS = 256;

/**
 * What this process knows of a model: limited (configured caps, or a response's rate-limit headers seen), unlimited
 * (a response without them: an API that sends none, like the local one without limits, costs nothing per call), or
 * being probed: its first call is on its way, and the others wait for that call's response to tell.
 */
type Knowledge = 'limited' | 'unlimited' | { probe: Promise<void>; learned: () => void };

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
  private readonly known = new Map<string, Knowledge>();
  private readonly reservations: BatchedSender<ReserveRequest, Reserved | undefined>;
  private readonly reports: BatchedSender<Observation, void>;
  private timeouts = 0;
  private timeoutLoggedAt = 0;

  constructor(private readonly options: FleetRateLimiterOptions) {
    this.workflowId = rateLimiterId(options.scope);
    this.reservations = new BatchedSender((requests) => this.sendReservations(requests), MAX_BATCH);
    this.reports = new BatchedSender((seen) => this.sendReports(seen), MAX_BATCH);
  }

  /** False for a model known to be unlimited (no caps, responses without rate-limit headers): nothing to estimate. */
  mayReserve(model: string): boolean {
    return this.known.get(model) !== 'unlimited' || capsOf(this.options, model) !== undefined;
  }

  /**
   * Reserves `cost` for the request `key` names (asking again with the same key gets the same reservation). Undefined
   * when the model is not limited, or the limiter did not answer in time.
   */
  async reserve(model: string, key: string, cost: RateAmounts): Promise<Reserved | undefined> {
    const caps = capsOf(this.options, model);
    if (!caps && !(await this.isLimited(model))) return undefined;
    const sending = this.reservations.add({ key, model, cost, ...(caps && { caps }) });
    const reserved = await within(RESERVE_TIMEOUT_MS, sending.result);
    if (reserved === TIMED_OUT) {
      sending.drop();
      this.timedOut();
      return undefined;
    }
    return reserved;
  }

  /**
   * What a response's headers (or their absence) tell of its model, as soon as they arrive: the calls waiting for the
   * model's first response go on.
   */
  learn(
    model: string,
    reading: HeaderReading | undefined,
    { answered, unreserved }: { answered: boolean; unreserved?: { key: string; estimate?: RateAmounts } },
  ): void {
    const before = this.known.get(model);
    const probe = typeof before === 'object' ? before : undefined;
    if (reading?.limits || reading?.retryAfterMs !== undefined) {
      this.remember(model, 'limited');
      // The probe's headers reach the limiter before the calls that waited for them reserve, so their reservations
      // meet buckets that know the limits and what remains (and what this unreserved request took).
      if (probe) {
        const call = unreserved && { estimate: unreserved.estimate, unreserved: true as const };
        void this.report(model, unreserved?.key, reading, call || {}).finally(probe.learned);
      }
      return;
    }
    if (answered && before !== 'limited') this.remember(model, 'unlimited');
    // No answer (the request failed before the API said anything): the next call probes again.
    else if (probe) this.known.delete(model);
    probe?.learned();
  }

  /**
   * Whether calls of `model` reserve. The first call of a model this process knows nothing of goes without (a probe);
   * calls meanwhile wait up to PROBE_WAIT_MS for its response's headers, so that a burst of first calls does not reach
   * the API unreserved.
   */
  private async isLimited(model: string): Promise<boolean> {
    const known = this.known.get(model);
    if (known === 'limited' || known === 'unlimited') return known === 'limited';
    if (known) {
      await within(PROBE_WAIT_MS, known.probe);
      return this.known.get(model) === 'limited';
    }
    let learned = (): void => undefined;
    const probe = new Promise<void>((resolve) => {
      learned = resolve;
    });
    this.remember(model, { probe, learned });
    return false;
  }

  private remember(model: string, knowledge: Knowledge): void {
    this.known.delete(model);
    if (this.known.size >= MAX_KNOWN_MODELS) this.known.delete(this.known.keys().next().value!);
    this.known.set(model, knowledge);
  }

  /** A timed-out reservation lets its call through unreserved: said at most once a minute, with the count. */
  private timedOut(): void {
    this.timeouts++;
    const now = Date.now();
    if (now - this.timeoutLoggedAt < 60_000) return;
    this.timeoutLoggedAt = now;
    log.warn('The rate limiter did not answer in time: calls go without waiting', {
      timeoutMs: RESERVE_TIMEOUT_MS,
      timedOutSinceStart: this.timeouts,
    });
  }

  /** Reports what a response said; never fails the call (resolves once sent, or dropped). */
  report(
    model: string,
    key: string | undefined,
    reading: HeaderReading | undefined,
    { usage, estimate, unreserved }: { usage?: RateAmounts; estimate?: RateAmounts; unreserved?: true } = {},
  ): Promise<void> {
    if (this.known.get(model) !== 'limited' && !capsOf(this.options, model)) return Promise.resolve(); // not limited
    const seen: Observation = {
      model,
      ...(key !== undefined && { key }),
      ...(reading?.limits && { limits: fleetLimits(reading.limits, this.options, model) }),
      ...(reading?.remaining && { remaining: reading.remaining }),
      ...(reading?.retryAfterMs !== undefined && { retryAfterMs: reading.retryAfterMs }),
      ...(usage && { usage }),
      ...(estimate && (usage || unreserved) && { estimate }),
      ...(unreserved && key !== undefined && { unreserved }),
    };
    if (Object.keys(seen).length <= 2 && !seen.usage) return Promise.resolve(); // nothing learned
    return this.reports.add(seen).result;
  }

  /** One batch of reservations; a batch that fails is answered undefined for each (its calls go unreserved). */
  private async sendReservations(requests: ReserveRequest[]): Promise<Array<Reserved | undefined>> {
    try {
      return await this.options.client().workflow.executeUpdateWithStart(reserveUpdate, {
        args: [requests],
        startWorkflowOperation: this.startOperation(),
      });
    } catch (err) {
      log.warn('The rate limiter could not be asked: the calls go without waiting', {
        calls: requests.length,
        error: String(err),
      });
      return requests.map(() => undefined);
    }
  }

  /** One batch of reports; one that fails is dropped. */
  private async sendReports(seen: Observation[]): Promise<void[]> {
    try {
      await this.options.client().workflow.signalWithStart(RATE_LIMITER_WORKFLOW, {
        workflowId: this.workflowId,
        taskQueue: this.options.taskQueue,
        priority: LIMITER_PRIORITY,
        signal: observeSignal,
        signalArgs: [seen],
      });
    } catch (err) {
      log.warn('Rate-limit reports were dropped', { reports: seen.length, error: String(err) });
    }
    return seen.map(() => undefined);
  }

  private startOperation() {
    const operation = new WithStartWorkflowOperation(RATE_LIMITER_WORKFLOW, {
      workflowId: this.workflowId,
      taskQueue: this.options.taskQueue,
      priority: LIMITER_PRIORITY,
      workflowIdConflictPolicy: 'USE_EXISTING',
      args: [],
    });
    // Its handle is not used: a failed start rejects the update already, and must not also reject unhandled.
    operation.workflowHandle().catch(() => undefined);
    return operation;
  }
}

const TIMED_OUT = Symbol('timed out');

/** `promise`'s value, or TIMED_OUT once `ms` have passed. */
async function within<T>(ms: number, promise: Promise<T>): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<typeof TIMED_OUT>((resolve) => {
        timer = setTimeout(() => resolve(TIMED_OUT), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
