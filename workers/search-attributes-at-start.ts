// A worker's look at its namespace before it takes work (WORKER_SEARCH_ATTRIBUTES): a namespace set up for an older
// build may lack a search attribute this build uses (ForkedFrom, say), and the first start or upsert that names it
// would be refused far from the deploy that caused it. `check` (default) refuses to start with the exact commands;
// `add` adds what is missing (a dev server, a self-hosted cluster that allows it); `off` skips the look. A server that
// does not answer the operator API (Temporal Cloud) gets a warning, not a refusal.
import { ConfigError } from './config';
import {
  addSearchAttributes,
  namespaceAttributes,
  namespaceAttributesRefusal,
  type OperatorConnection,
} from '../client/namespace-search-attributes';

export type SearchAttributesMode = 'check' | 'add' | 'off';

export async function searchAttributesAtStart(
  connection: OperatorConnection,
  namespace: string,
  mode: SearchAttributesMode,
  warn: (message: string) => void,
): Promise<void> {
  if (mode === 'off') return;
  let found;
  try {
    found = await namespaceAttributes(connection, namespace);
  } catch (error) {
    warn(
      `Could not list the search attributes of namespace ${namespace} (${(error as Error).message}); starting ` +
        'without checking them (WORKER_SEARCH_ATTRIBUTES=off skips the look).',
    );
    return;
  }
  if (found.missing.length === 0 && found.mistyped.length === 0) return;
  if (mode === 'add' && found.mistyped.length === 0) {
    await addSearchAttributes(connection, namespace, found.missing);
    warn(`Added search attributes to namespace ${namespace}: ${found.missing.map((key) => key.name).join(', ')}.`);
    return;
  }
  throw new ConfigError(namespaceAttributesRefusal(namespace, found));
}
