// What a Messages API response says of the organisation's rate limits: `anthropic-ratelimit-{requests,input-tokens,
// output-tokens}-{limit,remaining}` and `retry-after`, read into the limiter's dimensions (common/rate-limits.ts), and
// the worker's configuration applied to the limits (it can only lower them: a share, and caps). Pure.
import { RATE_DIMENSIONS, type RateAmounts, type RateDimension } from '../common/rate-limits';
import { requestedDelayMs } from './model-failure';

/** The header name of each dimension. */
const HEADER_OF: Record<RateDimension, string> = {
  requests: 'requests',
  inputTokens: 'input-tokens',
  outputTokens: 'output-tokens',
};

/** What the worker is configured with: a share of the organisation's limits, and caps (default and per model). */
export interface RateLimitSettings {
  /** (0, 1]: the part of the learned limits this fleet may use. */
  share: number;
  caps?: { all?: RateAmounts; models?: Record<string, RateAmounts> };
}

export interface HeaderReading {
  limits?: RateAmounts;
  remaining?: RateAmounts;
  retryAfterMs?: number;
}

interface HeaderSource {
  get(name: string): string | null;
}

/** The limits, what remains, and the retry-after of a response's headers (undefined when they say nothing). */
export function readRateLimitHeaders(headers: HeaderSource | undefined, now = Date.now()): HeaderReading | undefined {
  if (!headers) return undefined;
  const limits = amounts(headers, 'limit');
  const remaining = amounts(headers, 'remaining');
  const retryAfterMs = requestedDelayMs(headers as Headers, now);
  const reading: HeaderReading = {
    ...(limits && { limits }),
    ...(remaining && { remaining }),
    ...(retryAfterMs !== undefined && { retryAfterMs }),
  };
  return Object.keys(reading).length > 0 ? reading : undefined;
}

/** The configured caps of a model: its own over the default, per dimension. */
export function capsOf(settings: RateLimitSettings, model: string): RateAmounts | undefined {
  const caps = { ...settings.caps?.all, ...settings.caps?.models?.[model] };
  return Object.keys(caps).length > 0 ? caps : undefined;
}

/**
 * Learned limits as the fleet may use them: the share of each, never above the configured cap. What remains is shared
 * the same way (another fleet may spend the rest).
 */
export function fleetLimits(learned: RateAmounts, settings: RateLimitSettings, model: string): RateAmounts {
  const caps = capsOf(settings, model);
  const fleet: RateAmounts = {};
  for (const dimension of RATE_DIMENSIONS) {
    const limit = learned[dimension];
    if (limit === undefined) continue;
    const shared = Math.max(1, Math.floor(limit * settings.share));
    const cap = caps?.[dimension];
    fleet[dimension] = cap !== undefined ? Math.min(shared, cap) : shared;
  }
  return fleet;
}

function amounts(headers: HeaderSource, kind: 'limit' | 'remaining'): RateAmounts | undefined {
  const found: RateAmounts = {};
  for (const dimension of RATE_DIMENSIONS) {
    const text = headers.get(`anthropic-ratelimit-${HEADER_OF[dimension]}-${kind}`);
    if (text === null || text.trim() === '') continue;
    const value = Number(text);
    if (Number.isFinite(value) && value >= 0 && value <= 1e12) found[dimension] = value;
  }
  return Object.keys(found).length > 0 ? found : undefined;
}
