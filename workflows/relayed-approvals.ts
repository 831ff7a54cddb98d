// Approvals that sub-agents wait for, as their parent keeps them: each came up from the child it runs (`via`), which
// may have it from a child of its own (`approval.agent` names the conversation whose call it is). A decision goes back
// down the same way (workflows/agent-approvals.ts). Pure: unit-tested without Temporal.
import type { PendingApproval } from '../common/conversation-types';

interface Relayed {
  approval: PendingApproval & { agent: string };
  /** The child of this conversation it came from. */
  via: string;
  decided: boolean;
}

/** A conversation has at most this many sub-agents' approvals waiting; more are refused (bounded state). */
export const MAX_RELAYED_APPROVALS = 1_000;

const keyOf = (agent: string, callId: string): string => `${agent}\n${callId}`;

export class RelayedApprovals {
  readonly #waiting = new Map<string, Relayed>();

  /** Keeps `approval` (from child `via`); false when it cannot (too many wait already). */
  add(approval: PendingApproval & { agent: string }, via: string): boolean {
    const key = keyOf(approval.agent, approval.callId);
    const known = this.#waiting.get(key);
    // The same request again (a repeated signal): a decision already on its way down stands; nobody is asked twice.
    if (known) return true;
    if (this.#waiting.size >= MAX_RELAYED_APPROVALS) return false;
    this.#waiting.set(key, { approval, via, decided: false });
    return true;
  }

  /** The approval no longer waits: child `via` settled it (news from another child changes nothing). */
  settle(agent: string, callId: string, via: string): void {
    const key = keyOf(agent, callId);
    if (this.#waiting.get(key)?.via === via) this.#waiting.delete(key);
  }

  /** Child `via` ended: none of its approvals can be decided any more. */
  dropVia(via: string): void {
    for (const [key, relayed] of this.#waiting) if (relayed.via === via) this.#waiting.delete(key);
  }

  /**
   * The waiting approval a decision names: by its call id, and the agent when the decision names one. Returns why not
   * when none or more than one match.
   */
  find(callId: string, agent: string | undefined): { relayed: Relayed } | { problem: string } {
    if (agent !== undefined) {
      const relayed = this.#waiting.get(keyOf(agent, callId));
      return relayed && !relayed.decided
        ? { relayed }
        : { problem: `No tool call ${callId} of sub-agent ${agent} is waiting for approval.` };
    }
    const matches = [...this.#waiting.values()].filter((r) => r.approval.callId === callId && !r.decided);
    if (matches.length === 1) return { relayed: matches[0]! };
    if (matches.length === 0) return { problem: `No tool call ${callId} is waiting for approval.` };
    return { problem: `Several sub-agents wait for approval of a call ${callId}: name the agent.` };
  }

  /** A decision went down to the child: the approval waits no longer for a person. */
  markDecided(agent: string, callId: string): void {
    const relayed = this.#waiting.get(keyOf(agent, callId));
    if (relayed) relayed.decided = true;
  }

  /** Whether any still waits for a person. */
  get anyPending(): boolean {
    for (const relayed of this.#waiting.values()) if (!relayed.decided) return true;
    return false;
  }

  /** The approvals still waiting for a person. */
  pending(): PendingApproval[] {
    return [...this.#waiting.values()].filter((r) => !r.decided).map((r) => r.approval);
  }

  get size(): number {
    return this.#waiting.size;
  }
}
