// The fleet rate limiter's configuration (docs/rate-limits.md): ANTHROPIC_RATE_LIMITER (on, the default, or off: calls
// go out as they come, as before the limiter), ANTHROPIC_RATE_LIMITS (caps, JSON, optionally per model), and
// ANTHROPIC_RATE_LIMIT_SHARE (the part of the organisation's limits this fleet may use), ANTHROPIC_RATE_LIMIT_SCOPE
// (which workers share one limiter; default: a digest of the API's URL and key). Configuration only lowers the limits
// the API's headers teach.
import { z } from 'zod';
import { jsonVariable } from './json-variable';
import type { RateAmounts } from '../common/rate-limits';

const perMinute = z.number().int().positive().max(1e12);
/** The local Messages API's shape (MESSAGES_API_RATE_LIMITS). */
const limitsShape = {
  requestsPerMinute: perMinute.optional(),
  inputTokensPerMinute: perMinute.optional(),
  outputTokensPerMinute: perMinute.optional(),
};
export const rateLimitCapsSchema = z
  .object({ ...limitsShape, models: z.record(z.string().min(1).max(200), z.object(limitsShape).strict()).optional() })
  .strict();
export type RateLimitCaps = z.infer<typeof rateLimitCapsSchema>;

/** What runWorker's and createConversationWorker's `rateLimits` option takes. */
export interface RateLimitOptions {
  /** `off`: no limiter, every call goes out at once. @default 'on' */
  limiter?: 'on' | 'off';
  /**
   * Caps under the learned limits, per minute, for every model or per model.
   * @example { inputTokensPerMinute: 40_000, models: { 'claude-haiku-4-5': { requestsPerMinute: 100 } } }
   */
  limits?: RateLimitCaps;
  /** (0, 1]: the part of the organisation's learned limits this fleet may use. @default 1 */
  share?: number;
  /** Workers with the same scope share one limiter. @default a digest of the API's base URL and key */
  scope?: string;
}

export const rateLimitEnvShape = {
  ANTHROPIC_RATE_LIMITER: z.enum(['on', 'off']).default('on'),
  ANTHROPIC_RATE_LIMITS: jsonVariable(rateLimitCapsSchema).optional(),
  ANTHROPIC_RATE_LIMIT_SHARE: z.coerce.number().gt(0).max(1).optional(),
  ANTHROPIC_RATE_LIMIT_SCOPE: z
    .string()
    .trim()
    .regex(/^[\w.-]{1,100}$/, 'must be 1-100 letters, digits, ".", "_" or "-"')
    .optional(),
};

/** The options of the environment's variables, under those given in code. */
export function rateLimitOptionsOf(
  env: {
    ANTHROPIC_RATE_LIMITER: 'on' | 'off';
    ANTHROPIC_RATE_LIMITS?: RateLimitCaps | undefined;
    ANTHROPIC_RATE_LIMIT_SHARE?: number | undefined;
    ANTHROPIC_RATE_LIMIT_SCOPE?: string | undefined;
  },
  given: RateLimitOptions = {},
): RateLimitOptions {
  return {
    limiter: given.limiter ?? env.ANTHROPIC_RATE_LIMITER,
    ...((given.limits ?? env.ANTHROPIC_RATE_LIMITS) && { limits: given.limits ?? env.ANTHROPIC_RATE_LIMITS }),
    ...((given.share ?? env.ANTHROPIC_RATE_LIMIT_SHARE) !== undefined && {
      share: given.share ?? env.ANTHROPIC_RATE_LIMIT_SHARE,
    }),
    ...((given.scope ?? env.ANTHROPIC_RATE_LIMIT_SCOPE) && { scope: given.scope ?? env.ANTHROPIC_RATE_LIMIT_SCOPE }),
  };
}

/** Caps in the limiter's dimensions: the default ones and each model's. */
export function capsInDimensions(caps: RateLimitCaps | undefined): {
  all?: RateAmounts;
  models?: Record<string, RateAmounts>;
} {
  if (!caps) return {};
  const { models, ...all } = caps;
  const converted = (limits: Omit<RateLimitCaps, 'models'>): RateAmounts => ({
    ...(limits.requestsPerMinute !== undefined && { requests: limits.requestsPerMinute }),
    ...(limits.inputTokensPerMinute !== undefined && { inputTokens: limits.inputTokensPerMinute }),
    ...(limits.outputTokensPerMinute !== undefined && { outputTokens: limits.outputTokensPerMinute }),
  });
  return {
    all: converted(all),
    ...(models && { models: Object.fromEntries(Object.entries(models).map(([m, l]) => [m, converted(l)])) }),
  };
}
