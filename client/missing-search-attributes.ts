// A namespace without the conversation search attributes refuses every conversation's start ("Namespace X has no
// mapping defined for search attribute ConversationStatus"): recognised here, and answered with the fix — the
// package's ensureSearchAttributes, or the Temporal CLI's commands, one per type, for every attribute at once.
import { type SearchAttributeType, TypedSearchAttributes } from '@temporalio/common';
import { registeredSearchAttributes } from '../common/search-attributes';

const NO_MAPPING = /Namespace (\S+) has no mapping defined for search attribute (\S+)/;

/** The namespace and attribute the server named, when `err` (or a cause of it) is that refusal. */
export function missingSearchAttribute(err: unknown): { namespace: string; attribute: string } | undefined {
  for (let cause = err, depth = 0; cause instanceof Error && depth < 10; depth++, cause = cause.cause) {
    const match = NO_MAPPING.exec(cause.message);
    if (match) return { namespace: match[1]!, attribute: match[2]! };
  }
  return undefined;
}

/** `temporal operator search-attribute create` for every conversation attribute (or those given): one per type. */
export function searchAttributeCreateCommands(
  namespace: string,
  keys: readonly { name: string; type: SearchAttributeType }[] = registeredSearchAttributes,
): string[] {
  const byType = new Map<string, string[]>();
  for (const key of keys) {
    const type = TypedSearchAttributes.toMetadataType(key.type);
    byType.set(type, [...(byType.get(type) ?? []), key.name]);
  }
  return [...byType].map(
    ([type, names]) =>
      `temporal operator search-attribute create --namespace ${namespace} --type ${type} ` +
      names.map((name) => `--name ${name}`).join(' '),
  );
}

/** What a person does about it: the message of the `search_attributes_missing` ConversationError. */
export function missingSearchAttributesMessage(namespace: string, attribute: string): string {
  return (
    `The namespace "${namespace}" lacks the conversation search attributes (the server named ${attribute}), so no ` +
    'conversation can start there. Add them once: ensureSearchAttributes(address, namespace) from ' +
    'claude-temporal-orchestrator/testing (a dev server or a self-hosted cluster), or with the Temporal CLI:\n  ' +
    `${searchAttributeCreateCommands(namespace).join('\n  ')}\n` +
    'On Temporal Cloud, add them to the namespace there (same names and types).'
  );
}
