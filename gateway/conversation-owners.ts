// Whose each conversation is: its ConversationOwner search attribute, looked up with DescribeWorkflowExecution and
// remembered a little while per id. Another principal is answered as for a conversation that does not exist.
import type { Client } from '@temporalio/client';
import { ConversationError, toConversationError } from '../client/errors';
import { ConversationOwner } from '../common/search-attributes';
import type { Caller } from './bearer-tokens';
import { notFound } from './http-answers';

/**
 * How long a conversation's owner, once looked up, is taken as known. An owner never changes; an id is reused only
 * after its conversation's retention ran out, so this only bounds how stale that can be.
 */
const OWNER_TTL_MS = 30_000;
/** Owners remembered at most; the oldest is forgotten first. */
const MAX_OWNERS_CACHED = 10_000;

export class ConversationOwners {
  /** Conversation id → its owner (null: none recorded), until `expires`. Only conversations found are kept. */
  private readonly owners = new Map<string, { owner: string | null; expires: number }>();

  constructor(private readonly client: Client) {}

  /**
   * The conversation's owner (null: none recorded), or undefined when there is no such conversation. Remembered for
   * OWNER_TTL_MS once found.
   */
  async ownerOf(id: string): Promise<string | null | undefined> {
    const known = this.owners.get(id);
    if (known && known.expires > Date.now()) return known.owner;
    let owner: string | null;
    try {
      const description = await this.client.workflow.getHandle(id).describe();
      owner = description.typedSearchAttributes.get(ConversationOwner) ?? null;
    } catch (err) {
      const mapped = toConversationError(err, id);
      if (mapped instanceof ConversationError && mapped.code === 'not_found') return undefined;
      throw mapped;
    }
    this.owners.delete(id);
    if (this.owners.size >= MAX_OWNERS_CACHED) this.owners.delete(this.owners.keys().next().value!);
    this.owners.set(id, { owner, expires: Date.now() + OWNER_TTL_MS });
    return owner;
  }

  /** Looks the owner up again next time (a conversation appeared under the id meanwhile). */
  forget(id: string): void {
    this.owners.delete(id);
  }

  /** The caller may use this conversation: an admin any; a principal its own. Otherwise as if there were none. */
  async authorize(caller: Caller, id: string): Promise<void> {
    if (caller.admin) return;
    if ((await this.ownerOf(id)) !== caller.principal) throw notFound(id);
  }
}
