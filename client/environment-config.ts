// Configuration read from environment variables (the worker, the CLI, the gateway): parsed once with a zod schema, and
// a bad value stops the command with a message that names the variable.
import type { z } from 'zod';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * `env` parsed by `schema`, empty strings counting as unset (shells and compose files often produce them); otherwise a
 * ConfigError whose lines name each variable that is wrong, under `heading` (`Invalid configuration:`).
 */
export function parseEnvironment<S extends z.ZodType>(
  schema: S,
  env: Record<string, string | undefined>,
  heading = 'Invalid configuration:',
): z.output<S> {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = schema.safeParse(present);
  if (!parsed.success) {
    // zod's messages here name a rule, not the value: a secret (a token, an API key) is never quoted.
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`${heading}\n${lines.join('\n')}`);
  }
  return parsed.data;
}
