// An environment variable whose value is JSON checked by a schema (MODEL_PRICES, ANTHROPIC_RATE_LIMITS): text that is
// not JSON is refused as "must be JSON", JSON the schema refuses with the schema's own message.
import { z } from 'zod';

export function jsonVariable<T extends z.ZodTypeAny>(schema: T) {
  return z
    .string()
    .transform((text, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be JSON' });
        return z.NEVER;
      }
    })
    .pipe(schema);
}
