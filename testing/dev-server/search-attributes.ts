// The conversation search attributes on a Temporal server: what a SQLite-backed dev server can hold, the
// `--search-attribute` flags that register them at start, and registering (and checking) them on any server.
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { SearchAttributeType as SearchAttributeTypes, TypedSearchAttributes } from '@temporalio/common';
// Not re-exported from the package root in 1.24.
import {
  encodeSearchAttributeIndexedValueType,
  type SearchAttributeType,
} from '@temporalio/common/lib/search-attributes';
import { registeredSearchAttributes } from '../../common/search-attributes';
import { errorMessage, GRPC_ALREADY_EXISTS, grpcCode } from './grpc-errors';
import type { SearchAttributeKeyAny } from './types';

/**
 * Custom search attributes per type that the dev server's SQLite visibility store can hold in one namespace: it maps
 * each to a fixed column (Int01..Int03, Keyword01..Keyword10, ...; go.temporal.io/server common/searchattribute/defs.go
 * sqlDbCustomSearchAttributes). One more and `start-dev` exits with "cannot have more than 3 search attributes of
 * type Int".
 */
export const SQLITE_SEARCH_ATTRIBUTE_LIMITS: Readonly<Record<SearchAttributeType, number>> = {
  KEYWORD: 10,
  TEXT: 3,
  INT: 3,
  DOUBLE: 3,
  BOOL: 3,
  DATETIME: 3,
  KEYWORD_LIST: 3,
};

/** Throws a clear error when `keys` cannot all be registered on a SQLite-backed dev server. */
export function checkSqliteSearchAttributeLimits(keys: readonly SearchAttributeKeyAny[]): void {
  const counts = new Map<SearchAttributeType, string[]>();
  for (const key of keys) counts.set(key.type, [...(counts.get(key.type) ?? []), key.name]);
  const over = [...counts].filter(([type, names]) => names.length > SQLITE_SEARCH_ATTRIBUTE_LIMITS[type]);
  if (over.length === 0) return;
  throw new Error(
    'The Temporal dev server (SQLite visibility) holds at most ' +
      Object.entries(SQLITE_SEARCH_ATTRIBUTE_LIMITS)
        .map(([type, n]) => `${n} ${type}`)
        .join(', ') +
      ' custom search attributes per namespace, but ' +
      over.map(([type, names]) => `${names.length} are ${type} (${names.join(', ')})`).join('; ') +
      '. Change the types or drop some in common/search-attributes.ts.',
  );
}
/** `--search-attribute Name=Type` pairs for every attribute in common/search-attributes.ts. */
export function searchAttributeArgs(keys: readonly SearchAttributeKeyAny[] = registeredSearchAttributes): string[] {
  return keys.flatMap((key) => ['--search-attribute', `${key.name}=${TypedSearchAttributes.toMetadataType(key.type)}`]);
}

/**
 * Makes sure every conversation search attribute exists in `namespace` with the right type: adds the missing ones
 * (an "already exists" race is fine) and fails if one exists with another type. `server` is a `host:port` (a
 * connection is opened and closed here: a service needs no `@temporalio/client` of its own for this) or a Connection.
 */
export async function ensureSearchAttributes(
  server: string | Connection,
  namespace: string,
  keys: readonly SearchAttributeKeyAny[] = registeredSearchAttributes,
): Promise<void> {
  if (typeof server !== 'string') return addMissing(server, namespace, keys);
  const connection = await Connection.connect({ address: server });
  try {
    await addMissing(connection, namespace, keys);
  } finally {
    await connection.close();
  }
}

async function addMissing(
  connection: Connection,
  namespace: string,
  keys: readonly SearchAttributeKeyAny[],
): Promise<void> {
  const wanted = new Map<string, number>();
  for (const key of keys) {
    const type = encodeSearchAttributeIndexedValueType(key.type);
    if (type === undefined) throw new Error(`Unknown search attribute type ${key.type} for ${key.name}`);
    wanted.set(key.name, type);
  }
  const list = async (): Promise<Record<string, number>> => {
    const response = await connection.withDeadline(Date.now() + 10_000, () =>
      connection.operatorService.listSearchAttributes({ namespace }),
    );
    return (response.customAttributes ?? {}) as Record<string, number>;
  };
  const check = (existing: Record<string, number>): string[] => {
    const missing: string[] = [];
    for (const [name, type] of wanted) {
      const have = existing[name];
      if (have === undefined) missing.push(name);
      else if (have !== type) {
        throw new Error(
          `Search attribute ${name} exists in namespace ${namespace} as ${typeName(have)}, but ` +
            `common/search-attributes.ts says ${typeName(type)}. A server cannot change a search attribute's ` +
            'type; for a dev server, delete its SQLite file (a database from before the change) and start again.',
        );
      }
    }
    return missing;
  };

  let missing = check(await list());
  if (missing.length === 0) return;
  try {
    await connection.withDeadline(Date.now() + 30_000, () =>
      connection.operatorService.addSearchAttributes({
        namespace,
        searchAttributes: Object.fromEntries(missing.map((name) => [name, wanted.get(name) ?? 0])),
      }),
    );
  } catch (error) {
    if (grpcCode(error) !== GRPC_ALREADY_EXISTS && !/already exists/i.test(errorMessage(error))) throw error;
  }
  // Registration is asynchronous on a real cluster (immediate on the dev server): wait for it to show.
  const deadline = Date.now() + 30_000;
  for (;;) {
    missing = check(await list());
    if (missing.length === 0) return;
    if (Date.now() > deadline)
      throw new Error(`Search attributes still missing in ${namespace}: ${missing.join(', ')}`);
    await sleep(500);
  }
}

function typeName(type: number): string {
  return (
    Object.values(SearchAttributeTypes).find((name) => encodeSearchAttributeIndexedValueType(name) === type) ??
    `type #${type}`
  );
}
