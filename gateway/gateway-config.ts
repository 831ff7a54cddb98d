// The gateway's configuration, from the environment, validated once at start-up (a bad value names its variable).
//
// Who may call: bearer tokens, each mapped to a principal (a name) and whether it is an admin.
//   GATEWAY_TOKEN         one token: principal "default", an admin (as before principals existed: it sees every
//                         conversation, those started elsewhere without an owner included).
//   GATEWAY_TOKENS        JSON: { "<token>": { "principal": "alice", "admin": false }, ... }
//   GATEWAY_TOKENS_FILE   the same JSON in a file (instead of GATEWAY_TOKENS; keeps the tokens out of the environment).
// At least one token in all. A principal sees only the conversations it started (ConversationOwner); an admin sees
// every one and may list them all. A refusal names the variable and the entry's position, never a token.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { connectionSettingsProblems, connectionSettingsShape } from '../client/connection-settings';
import { ConfigError, parseEnvironment } from '../client/environment-config';

/** What a bearer token may hold: visible ASCII (RFC 6750's b64token and more), no spaces, 16-4,096 characters. */
const tokenSchema = z
  .string()
  .min(16, 'must be at least 16 characters')
  .max(4_096, 'must be at most 4,096 characters')
  .regex(/^[\x21-\x7e]+$/, 'must be visible ASCII characters only (no spaces, no control or non-ASCII characters)');

/**
 * A principal's name: 1-128 letters, digits and `._@:+-`, starting with a letter or digit (`alice`,
 * `team-a:bob@example.com`). It is the ConversationOwner value and goes into visibility queries (quoted there too).
 */
export const principalSchema = z
  .string({ error: 'a principal is a string' })
  .max(128, { error: 'a principal has at most 128 characters', abort: true })
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._@:+-]*$/,
    'a principal is 1-128 letters, digits, ".", "_", "@", ":", "+" or "-", starting with a letter or digit',
  );

/** The principal GATEWAY_TOKEN maps to. */
export const DEFAULT_PRINCIPAL = 'default';

/**
 * The limits a gateway has unless told otherwise: here and in GatewayOptions (createGatewayHandler), one source for
 * both doors.
 */
export const DEFAULT_GATEWAY_LIMITS = {
  maxBodyBytes: 1_000_000,
  maxStreamsPerToken: 16,
  maxStreamsPerConversation: 8,
  maxStreamBufferBytes: 1_048_576,
} as const;

const grantSchema = z.strictObject(
  {
    /** Whose the token is: its conversations' ConversationOwner. */
    principal: principalSchema,
    /** An admin reads and acts on every conversation and may list them all (`?all=1`). */
    admin: z.boolean({ error: 'admin is true or false' }).default(false),
  },
  {
    error: (issue) =>
      issue.code === 'invalid_type' ? 'each entry is an object { "principal": "...", "admin"?: boolean }' : undefined,
  },
);

/** A bearer token and whose it is (GATEWAY_TOKENS' entries: the grant's shape is grantSchema's). */
export interface GatewayToken extends z.output<typeof grantSchema> {
  /** What callers send as `Authorization: Bearer <token>`; at least 16 characters. */
  token: string;
}

export const gatewayConfigSchema = z.object({
  GATEWAY_HOST: z.string().trim().min(1).default('127.0.0.1'),
  GATEWAY_PORT: z.coerce.number().int().min(0).max(65_535).default(8080),
  /** Callers send `Authorization: Bearer <token>`; at least 16 characters. Principal "default", an admin. */
  GATEWAY_TOKEN: z.string().trim().pipe(tokenSchema).optional(),
  /** JSON `{ "<token>": { "principal": "alice", "admin"?: false } }`: several principals. */
  GATEWAY_TOKENS: z.string().optional(),
  /** A file holding what GATEWAY_TOKENS would. */
  GATEWAY_TOKENS_FILE: z.string().trim().min(1).optional(),
  /** Largest JSON body accepted, bytes. */
  GATEWAY_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1_024)
    .max(10_000_000)
    .default(DEFAULT_GATEWAY_LIMITS.maxBodyBytes),
  /** Event streams one token may have open at once; one more is 429 with Retry-After. */
  GATEWAY_MAX_STREAMS_PER_TOKEN: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(DEFAULT_GATEWAY_LIMITS.maxStreamsPerToken),
  /** Event streams open at once on one conversation, whoever reads them. */
  GATEWAY_MAX_STREAMS_PER_CONVERSATION: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(DEFAULT_GATEWAY_LIMITS.maxStreamsPerConversation),
  /** Bytes an event stream may have waiting for a slow reader before it is ended (the reader resumes). */
  GATEWAY_MAX_STREAM_BUFFER_BYTES: z.coerce
    .number()
    .int()
    .min(16_384)
    .max(1_000_000_000)
    .default(DEFAULT_GATEWAY_LIMITS.maxStreamBufferBytes),
  /** TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TASK_QUEUE, and TLS or an API key: as the worker and the CLI. */
  ...connectionSettingsShape,
  /** The Temporal Web UI as a browser reaches it: the chat page links each conversation there. */
  TEMPORAL_UI_URL: z.url({ protocol: /^https?$/ }).optional(),
});

export type GatewayConfig = z.infer<typeof gatewayConfigSchema> & {
  /** Every token the gateway takes, GATEWAY_TOKEN's among them. */
  tokens: GatewayToken[];
};

export function loadGatewayConfig(env: Record<string, string | undefined> = process.env): GatewayConfig {
  // A token's own value is never quoted (zod's messages here name a rule, not the value).
  const config = parseEnvironment(gatewayConfigSchema, env, 'Invalid gateway configuration:');
  const problems: string[] = connectionSettingsProblems(config);
  const tokens: GatewayToken[] = [];
  if (config.GATEWAY_TOKEN !== undefined) {
    tokens.push({ token: config.GATEWAY_TOKEN, principal: DEFAULT_PRINCIPAL, admin: true });
  }
  if (config.GATEWAY_TOKENS !== undefined && config.GATEWAY_TOKENS_FILE !== undefined) {
    problems.push('GATEWAY_TOKENS, GATEWAY_TOKENS_FILE: set one of them, not both');
  } else if (config.GATEWAY_TOKENS !== undefined) {
    tokens.push(...parseTokens(config.GATEWAY_TOKENS, 'GATEWAY_TOKENS', problems));
  } else if (config.GATEWAY_TOKENS_FILE !== undefined) {
    let text: string | undefined;
    try {
      text = readFileSync(config.GATEWAY_TOKENS_FILE, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
      problems.push(`GATEWAY_TOKENS_FILE: cannot read ${JSON.stringify(config.GATEWAY_TOKENS_FILE)} (${code})`);
    }
    if (text !== undefined) tokens.push(...parseTokens(text, 'GATEWAY_TOKENS_FILE', problems));
  }
  if (problems.length === 0 && tokens.length === 0) {
    problems.push('GATEWAY_TOKEN: set GATEWAY_TOKEN, GATEWAY_TOKENS or GATEWAY_TOKENS_FILE (no token, no access)');
  }
  const seen = new Set<string>();
  for (const [index, { token }] of tokens.entries()) {
    if (seen.has(token)) problems.push(`tokens: entry ${index + 1} repeats a token given before it (GATEWAY_TOKEN's?)`);
    seen.add(token);
  }
  if (problems.length > 0) {
    throw new ConfigError(`Invalid gateway configuration:\n${problems.map((line) => `  ${line}`).join('\n')}`);
  }
  return { ...config, tokens };
}

/** GATEWAY_TOKENS' JSON as grants; what is wrong goes to `problems`, naming entries by position, never by token. */
function parseTokens(text: string, variable: string, problems: string[]): GatewayToken[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    // V8's message quotes the text, tokens and all: only where it fails is said.
    const at = /at position (\d+)/.exec((err as Error).message)?.[1];
    problems.push(`${variable}: not valid JSON${at ? ` (at character ${at})` : ''}`);
    return [];
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    problems.push(`${variable}: must be a JSON object { "<token>": { "principal": "...", "admin"?: boolean } }`);
    return [];
  }
  const entries = Object.entries(json);
  if (entries.length === 0) problems.push(`${variable}: has no tokens`);
  if (entries.length > 10_000) {
    problems.push(`${variable}: has ${entries.length} tokens; at most 10,000`);
    return [];
  }
  const tokens: GatewayToken[] = [];
  for (const [index, [token, value]] of entries.entries()) {
    const where = `${variable}: entry ${index + 1}`;
    const tokenCheck = tokenSchema.safeParse(token);
    if (!tokenCheck.success) problems.push(`${where}: the token ${tokenCheck.error.issues[0]?.message}`);
    const grant = grantSchema.safeParse(value);
    if (!grant.success) {
      for (const issue of grant.error.issues.slice(0, 3)) {
        // Unknown keys are named by zod; they are the caller's own config, but bounded all the same.
        const path = issue.path.length > 0 ? `${issue.path.join('.').slice(0, 40)}: ` : '';
        problems.push(`${where}: ${path}${issue.message.slice(0, 200)}`);
      }
    }
    if (tokenCheck.success && grant.success) tokens.push({ token, ...grant.data });
  }
  return tokens;
}
