// The codec server's configuration, from the environment (codec/server-main.ts, the compose file's codec-server
// service). Validated once at start-up; a message names the variable, never a secret's value.
import { z } from 'zod';
import { durationMs } from '../common/options';
import { DEFAULT_SESSION_MAX_AGE_S } from './codec-server';
import { keyRingSchema } from './keys';

export const DEFAULT_CODEC_SERVER_PORT = 8081;
/** The dev server's UI (scripts/demo.ts: port 8233) and the compose file's UI (port 8080), as a browser types them. */
export const DEFAULT_CORS_ORIGINS = [
  'http://localhost:8233',
  'http://127.0.0.1:8233',
  'http://localhost:8080',
  'http://127.0.0.1:8080',
];

const origin = z
  .string()
  .trim()
  .regex(/^https?:\/\/[^/\s]+$/, 'each origin is scheme://host[:port], no path');

export const codecServerConfigSchema = z.object({
  PAYLOAD_ENCRYPTION_KEYS: keyRingSchema,
  CODEC_SERVER_TOKEN: z.string().trim().min(16, 'must be at least 16 characters (e.g. `openssl rand -base64 32`)'),
  CODEC_SERVER_HOST: z.string().trim().min(1).default('127.0.0.1'),
  CODEC_SERVER_PORT: z.coerce.number().int().min(0).max(65535).default(DEFAULT_CODEC_SERVER_PORT),
  /** How long a browser's login lasts (the session cookie): a duration, 1 minute to 30 days. */
  CODEC_SERVER_SESSION_MAX_AGE: z
    .string()
    .trim()
    .transform((text, ctx) => {
      const ms = durationMs(text);
      if (ms === undefined || ms < 60_000 || ms > 30 * 86_400_000) {
        ctx.addIssue({ code: 'custom', message: 'must be a duration from "1 minute" to "30 days", e.g. "8 hours"' });
        return z.NEVER;
      }
      return Math.floor(ms / 1000);
    })
    .default(DEFAULT_SESSION_MAX_AGE_S),
  CODEC_SERVER_CORS_ORIGINS: z
    .string()
    .transform((text) =>
      text
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean),
    )
    .pipe(z.array(origin).min(1))
    .default(DEFAULT_CORS_ORIGINS),
});

export type CodecServerConfig = z.infer<typeof codecServerConfigSchema>;

export function loadCodecServerConfig(env: Record<string, string | undefined> = process.env): CodecServerConfig {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = codecServerConfigSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`Invalid codec server configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}
