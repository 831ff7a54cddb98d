// Message threads (the API's beta `thread`): with the conversation option `threads`, the API holds the conversation
// between calls, so a call sends only what its turn added — a reference (the previous reply's id) plus the new
// messages, the shape the model activity's input already has. What the workflow and the activity share about it:
// the thread a later call may continue (an anchor), what a call did with its thread, and when a call may continue at
// all. Pure and workflow-safe. The why and the rules: docs/threads.md.
import type { StopReason } from '@anthropic-ai/sdk/resources/messages';

/** The beta a threaded request names (the SDK's own thread helper sends the same). */
export const THREADS_BETA = 'message-threads-2026-08-12';

/** The thread errors after which the same call is sent again whole, under a new thread (`create`). */
export const THREAD_REPLAY_CODES = [
  'thread_not_found',
  'thread_already_continued',
  'thread_continue_in_flight',
  'thread_fingerprint_mismatch',
] as const;
/** The request combines `thread` with something threads do not support: it goes again without a thread. */
export const THREAD_UNSUPPORTED_CODE = 'thread_unsupported_request';

/**
 * A reply a later call may continue from: its id, the fingerprint of the fields the thread keeps (model, system
 * prompt, tools: a call whose request differs in them creates a new thread instead), and the transcript length right
 * after it (set once the reply is in the transcript), so the messages after it are what a continue sends.
 */
export interface ThreadAnchor {
  id: string;
  fingerprint: string;
  at?: number;
}

/** A model call's input with threads on: absent `continueFrom`, the call creates a thread. */
export interface ThreadRequest {
  /** The reply to continue from; the call's `newMessages` are then exactly the messages after it. */
  continueFrom?: string;
  /** The fingerprint the thread was created with (ThreadAnchor.fingerprint). */
  fingerprint?: string;
}

/**
 * What a call did with its thread, in its result: `created` a new one, `continued` the one named, `fell_back` (a
 * continue the API refused — `error` names why — sent again whole as a new thread), or went `unthreaded` (the API
 * does not thread this request: `unsupported` names what; the conversation sends no thread from then on).
 */
export interface ThreadUse {
  mode: 'created' | 'continued' | 'fell_back' | 'unthreaded';
  fingerprint?: string;
  error?: string;
  unsupported?: string[];
}

/**
 * The anchor a reply leaves for the next call, if any: a call that went unthreaded leaves none, nor does a reply the
 * next call never continues from — one cut off by max_tokens (asked again, not continued) or a refusal (the SDK's
 * thread helper starts a new thread after one too).
 */
export function anchorOf(reply: {
  id: string;
  stop_reason: StopReason | null;
  thread?: ThreadUse;
}): ThreadAnchor | undefined {
  const use = reply.thread;
  if (!use || use.mode === 'unthreaded' || use.fingerprint === undefined) return undefined;
  if (reply.stop_reason === 'max_tokens' || reply.stop_reason === 'refusal') return undefined;
  return { id: reply.id, fingerprint: use.fingerprint };
}

/**
 * Whether the next call may continue from `anchor`, and from which transcript position its new messages start. A
 * call continues only from the reply the transcript last took in (`lastReplyId`; undefined in a run's first call,
 * after continue-as-new), when its place is known and still in the transcript, and never as a rung of the max_tokens
 * ladder, a fallback model's call or a paused turn's resumption: those ask again what was already asked from that
 * reply, and a reply is continued once.
 */
export function continuableFrom(
  anchor: ThreadAnchor | undefined,
  state: { lastReplyId: string | undefined; transcriptLength: number },
  call: { firstOfStep: boolean; joinsPausedTurn: boolean },
): { id: string; fingerprint: string; from: number } | undefined {
  if (!anchor || anchor.at === undefined || anchor.at > state.transcriptLength) return undefined;
  if (state.lastReplyId !== undefined && state.lastReplyId !== anchor.id) return undefined;
  if (!call.firstOfStep || call.joinsPausedTurn) return undefined;
  return { id: anchor.id, fingerprint: anchor.fingerprint, from: anchor.at };
}
