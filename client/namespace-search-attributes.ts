// Which conversation search attributes a namespace lacks, checked when a worker starts (workers/run-worker.ts): a
// build that added one (ForkedFrom, in the release after 0.1.0) meets namespaces set up for an older build, where
// the first start or upsert that names it would be refused ("no mapping defined for search attribute"). The worker
// either adds what is missing (WORKER_SEARCH_ATTRIBUTES=add: a dev server, a self-hosted cluster that lets it) or
// refuses to start with the exact Temporal CLI commands that fix the namespace.
import type { SearchAttributeType } from '@temporalio/common';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import { registeredSearchAttributes } from '../common/search-attributes';
import { searchAttributeCreateCommands } from './missing-search-attributes';

/** A search attribute's name and type (a SearchAttributeKey of any type). */
type AnyKey = { name: string; type: SearchAttributeType };

/** What both connections (the worker's NativeConnection, the client's Connection) offer for this. */
export interface OperatorConnection {
  operatorService: {
    listSearchAttributes(request: {
      namespace: string;
    }): Promise<{ customAttributes?: Record<string, unknown> | null }>;
    addSearchAttributes(request: { namespace: string; searchAttributes: Record<string, number> }): Promise<unknown>;
  };
  withDeadline<T>(deadline: number, fn: () => Promise<T>): Promise<T>;
}

export interface NamespaceAttributes {
  /** Attributes this build uses that the namespace lacks. */
  missing: AnyKey[];
  /** Attributes the namespace has with another type: a server cannot change a type, so nothing here can fix them. */
  mistyped: string[];
}

const LIST_DEADLINE_MS = 10_000;

/** Compares the namespace's custom search attributes with what this build registers. */
export async function namespaceAttributes(
  connection: OperatorConnection,
  namespace: string,
  keys: readonly AnyKey[] = registeredSearchAttributes,
): Promise<NamespaceAttributes> {
  const { customAttributes } = await connection.withDeadline(Date.now() + LIST_DEADLINE_MS, () =>
    connection.operatorService.listSearchAttributes({ namespace }),
  );
  const existing = (customAttributes ?? {}) as Record<string, number>;
  const missing: AnyKey[] = [];
  const mistyped: string[] = [];
  for (const key of keys) {
    const have = existing[key.name];
    if (have === undefined) missing.push(key);
    else if (have !== encodeSearchAttributeIndexedValueType(key.type)) mistyped.push(key.name);
  }
  return { missing, mistyped };
}

/** Adds `keys` to the namespace and waits until the server lists them (asynchronous on a real cluster). */
export async function addSearchAttributes(
  connection: OperatorConnection,
  namespace: string,
  keys: readonly AnyKey[],
  timeoutMs = 30_000,
): Promise<void> {
  const searchAttributes = Object.fromEntries(
    keys.map((key) => [key.name, encodeSearchAttributeIndexedValueType(key.type) ?? 0]),
  );
  await connection
    .withDeadline(Date.now() + timeoutMs, () =>
      connection.operatorService.addSearchAttributes({ namespace, searchAttributes }),
    )
    .catch((error: unknown) => {
      if (!/already exists/i.test(error instanceof Error ? error.message : String(error))) throw error;
    });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { missing } = await namespaceAttributes(connection, namespace, keys);
    if (missing.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(`Search attributes still missing in ${namespace}: ${missing.map((k) => k.name).join(', ')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Why a worker does not start on this namespace, and the commands that fix it. */
export function namespaceAttributesRefusal(namespace: string, { missing, mistyped }: NamespaceAttributes): string {
  const lines = [`The namespace "${namespace}" does not have the search attributes this build uses.`];
  if (missing.length > 0) {
    lines.push(
      `Missing: ${missing.map((key) => key.name).join(', ')}. Add them with the Temporal CLI (or start the worker ` +
        'once with WORKER_SEARCH_ATTRIBUTES=add, where it may add them: a dev server, a self-hosted cluster; on ' +
        'Temporal Cloud, add them to the namespace there):',
      ...searchAttributeCreateCommands(namespace, missing).map((command) => `  ${command}`),
    );
  }
  if (mistyped.length > 0) {
    lines.push(
      `Of another type than this build uses: ${mistyped.join(', ')}. A server cannot change a search attribute's ` +
        'type: remove it (temporal operator search-attribute remove) and add it again with the type above, or use ' +
        'another namespace.',
    );
  }
  return lines.join('\n');
}
