// The gateway's configuration, from the environment, validated once at start-up (a bad value names its variable).
import { z } from 'zod';
import { ConfigError } from '../workers/config';

export const gatewayConfigSchema = z.object({
  GATEWAY_HOST: z.string().trim().min(1).default('127.0.0.1'),
  GATEWAY_PORT: z.coerce.number().int().min(0).max(65_535).default(8080),
  /** Callers send `Authorization: Bearer <token>`; at least 16 characters. */
  GATEWAY_TOKEN: z.string().trim().min(16, 'must be at least 16 characters'),
  /** Largest JSON body accepted, bytes. */
  GATEWAY_MAX_BODY_BYTES: z.coerce.number().int().min(1_024).max(10_000_000).default(1_000_000),
  /** Event streams one token may have open at once; one more is 429 with Retry-After. */
  GATEWAY_MAX_STREAMS_PER_TOKEN: z.coerce.number().int().min(1).max(100_000).default(16),
  /** Event streams open at once on one conversation, whoever reads them. */
  GATEWAY_MAX_STREAMS_PER_CONVERSATION: z.coerce.number().int().min(1).max(100_000).default(8),
  /** Bytes an event stream may have waiting for a slow reader before it is ended (the reader resumes). */
  GATEWAY_MAX_STREAM_BUFFER_BYTES: z.coerce.number().int().min(16_384).max(1_000_000_000).default(1_048_576),
  TEMPORAL_ADDRESS: z.string().trim().min(1).default('localhost:7233'),
  TEMPORAL_NAMESPACE: z.string().trim().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().trim().min(1).default('claude-conversations'),
  /** The Temporal Web UI as a browser reaches it: the chat page links each conversation there. */
  TEMPORAL_UI_URL: z.url({ protocol: /^https?$/ }).optional(),
});

export type GatewayConfig = z.infer<typeof gatewayConfigSchema>;

export function loadGatewayConfig(env: Record<string, string | undefined> = process.env): GatewayConfig {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = gatewayConfigSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid gateway configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}
