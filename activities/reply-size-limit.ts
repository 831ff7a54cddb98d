// A model call's result is one Temporal payload, and Temporal refuses a payload over its blob limit (2 MiB by default:
// the server's `limit.blobSize.error`, which the SDK's worker also enforces before sending). Refused there, the reply
// is lost with the usage the API billed for it — a fetched PDF of 2 MB is 400,000 input tokens — and the workflow
// learns only that the result was too large. So the model activity measures its result first: over the worker's limit
// (below Temporal's, as the codec adds to each payload) it fails the call itself, not retried (a retry is billed
// again), with the usage in the failure's details, which the workflow counts like any failed attempt's
// (workflows/model-requests.ts). The reply is not kept anywhere: docs/deployment.md, "Limits at the boundaries", says
// why the turn fails rather than storing the reply outside the history.
import { ApplicationFailure } from '@temporalio/common';
import type { CallModelResult } from '../common/activity-contracts';
import type { TokenUsage } from '../common/conversation-types';
import { ModelFailureType } from '../common/failure-types';

/** Temporal's default payload limit, 2 MiB, less room for the codec and the payload's metadata. */
export const DEFAULT_MAX_REPLY_BYTES = 1_500_000;
/** The most a worker may be set to: a result over Temporal's default 2 MiB limit is refused by the server. */
export const MAX_REPLY_BYTES_LIMIT = 2_000_000;

/** What a too-large reply's failure carries: the usage the workflow counts, and the sizes the message names. */
export interface ReplyTooLargeDetails {
  billed: TokenUsage;
  bytes: number;
  limit: number;
}

/**
 * The failure for `result` when its JSON is over `limit` bytes (undefined when it fits): it names the size, the
 * limit, the largest block and what to change. `billed`: what the call billed, its failed attempts included.
 */
export function replyTooLarge(
  result: CallModelResult,
  limit: number,
  billed: TokenUsage,
): ApplicationFailure | undefined {
  const bytes = jsonBytes(result);
  if (bytes <= limit) return undefined;
  const largest = result.content
    .map((block) => ({ type: block.type, bytes: jsonBytes(block) }))
    .reduce((a, b) => (b.bytes > a.bytes ? b : a), { type: 'none', bytes: 0 });
  const details: ReplyTooLargeDetails = { billed, bytes, limit };
  return ApplicationFailure.create({
    type: ModelFailureType.ReplyTooLarge,
    message:
      `The model's reply is ${count(bytes)} bytes, over the limit of ${count(limit)} bytes for a model call's result ` +
      `(Temporal refuses a payload over 2 MiB); its largest block is a ${largest.type} of ${count(largest.bytes)} bytes. ` +
      `The call is billed and counted; the reply is dropped and not asked again. ${remedy(largest.type)} ` +
      `The worker's limit is WORKER_MAX_MODEL_REPLY_BYTES.`,
    nonRetryable: true,
    details: [details],
  });
}

/** What keeps the next reply under the limit, by the block that made this one too large. */
function remedy(blockType: string): string {
  if (blockType === 'web_fetch_tool_result') {
    return 'Cap what a fetch adds with serverTools.webFetch.maxContentTokens (e.g. 100000), or ask for a smaller page.';
  }
  return 'Ask for less in one reply (a lower maxTokens, or a smaller page or file for a server tool).';
}

const count = (n: number) => n.toLocaleString('en-US');

/**
 * The UTF-8 size of a value's JSON, the same count as common/utf8-length.ts's jsonBytes (JSON.stringify escapes lone
 * surrogates, the one place the two encoders could differ) by Node's native encoder: measuring every reply on the
 * worker, that loop in JavaScript cost more than the stringify itself (~45 ms for a 1.2 MB reply; under 1 ms here).
 */
function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
}
