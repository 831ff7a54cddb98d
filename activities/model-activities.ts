// The model call activity: one streamed Messages API call through the real SDK. The SDK's own retries are
// off (Temporal retries, with the classifier's verdict); the worker heartbeats while the stream runs, so a
// worker that dies mid-call is noticed within the heartbeat timeout and the call runs again elsewhere.
import type Anthropic from '@anthropic-ai/sdk';
import type { BetaMessage, BetaMessageStreamParams } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { Context } from '@temporalio/activity';
import type {
  CallModelInput,
  CallModelResult,
  ConversationRun,
  ModelRequestOptions,
} from '../common/activity-contracts';
import { afterCompaction, type ReplyBlock } from '../common/compaction';
import { readReply } from '../common/protocols/read-reply';
import { protocolFor } from '../common/protocols';
import { cutDeepInput } from '../common/protocols/tool-use-blocks';
import { callModelResultOf, compactedPromptTokens, withContextManagement } from './managed-context';
import { buildingRequest, toModelFailure } from './model-failure';
import type { ToolDescription } from '../common/protocols/types';
import { buildModelRequest } from './model-request';
import { keepAlive } from './keep-alive';
import { type ModelContextCache, withConversation } from './model-context-cache';
import type { McpToolSets } from './mcp/mcp-tool-sets';
import { LiveReplyHeartbeat, type RelayTarget } from '../streaming/worker/live-reply-heartbeat';
import { AttemptBilling } from './billed-attempts';
import { withReply } from '../common/paused-turn';
import { offersServerTools } from '../common/server-tools';
import type { ThreadUse } from '../common/threads';
import { sendThreaded, threadFingerprint, type ThreadedReply, type WholeRequest } from './model-thread';
import { DEFAULT_MAX_REPLY_BYTES, replyTooLarge } from './reply-size-limit';
import { addUsage } from '../common/usage';
import { CallRateLimits, RateLimitWait, waitFailure } from './call-rate-limits';
import type { FleetRateLimiter } from './fleet-rate-limiter';

export interface ModelActivityDeps {
  anthropic: Anthropic;
  /** Every tool the worker registers, as the model is told about it. */
  tools: readonly ToolDescription[];
  cache: ModelContextCache;
  /** The MCP tool lists of the conversations (by digest), for calls that offer MCP tools. */
  mcpToolSets?: McpToolSets;
  /** The worker's live relay: streamed replies go to their readers through it, not through the Temporal server. */
  relay?: RelayTarget;
  /** A reply whose result is larger fails its call, billed and not retried (reply-size-limit.ts). */
  maxReplyBytes?: number;
  /** The fleet's rate limiter (docs/rate-limits.md); without one, calls go out as they come (ANTHROPIC_RATE_LIMITER=off). */
  rateLimiter?: FleetRateLimiter;
}

export function createModelActivities({
  anthropic,
  tools,
  cache,
  mcpToolSets,
  relay,
  maxReplyBytes = DEFAULT_MAX_REPLY_BYTES,
  rateLimiter,
}: ModelActivityDeps) {
  const described = new Map(tools.map((tool) => [tool.name, tool]));

  async function callModel(given: CallModelInput): Promise<CallModelResult> {
    const input = withConversation(given);
    const context = Context.current();
    // What earlier attempts of this call billed: a retry the budget no longer allows is not sent.
    const billing = new AttemptBilling(context);
    billing.checkRetry(input.guard);
    const limits = rateLimiter && new CallRateLimits(rateLimiter, context);
    // Heartbeat from the start: reading the context may wait on a query (a dead worker's sticky queue). A streamed
    // reply's heartbeats carry the reply so far; every heartbeat carries what the call's attempts billed, and a
    // reservation waited for and not yet sent.
    const details = () => (limits ? limits.details(billing.details()) : billing.details());
    const live =
      input.stream && new LiveReplyHeartbeat(context, input.callNumber, input.stream.intervalMs, details, relay);
    const stopHeartbeats = live ? () => live.stop() : keepAlive(context, details);
    const attempt: Attempt = { input, context, billing, live, limits, details };
    const sent = await send(attempt)
      .catch((err: unknown) => {
        throw failureOf(attempt, err);
      })
      .finally(stopHeartbeats);

    const reply = callModelResultOf(sent.message, sent.compactedTokens);
    const result: CallModelResult = {
      ...reply,
      content: reply.content.map(forTheHistory),
      attempt: context.info.attempt,
      ...(billing.before && { failedAttempts: billing.before }),
      ...(sent.thread && { thread: sent.thread }),
    };
    // Measured before the worker keeps the reply: a reply the workflow never gets must not be the cache's last.
    const tooLarge = replyTooLarge(
      result,
      maxReplyBytes,
      billing.before ? addUsage(billing.before, reply.usage) : reply.usage,
    );
    if (tooLarge) throw tooLarge;
    keepModelContext(input, sent, reply);
    return result;
  }

  /** Builds this attempt's request (threaded or whole), streams it, and asks what a compaction in it closed. */
  async function send(attempt: Attempt): Promise<SentAttempt> {
    const { input, context } = attempt;
    const build = requestBuilder(input.request, await offeredTools(input));
    const whole = async (): Promise<WholeRequest> => {
      const modelContext = await cache.assemble(input);
      return { request: build(modelContext.messages, modelContext.system), modelContext };
    };
    const stream = streamReply(anthropic, attempt);
    const sent: SentRequest = input.thread
      ? await sendThreaded({
          thread: input.thread,
          attempt: context.info.attempt,
          fingerprint: threadFingerprint(build([])),
          delta: () => build(input.newMessages),
          whole,
          send: stream,
        })
      : await sendWhole(whole, stream);
    const compactedTokens = await compactedPromptTokens(
      anthropic,
      sent.request,
      sent.message,
      context.cancellationSignal,
    );
    return { ...sent, compactedTokens };
  }

  /** The tools the request offers, as the model is told about them: the worker's own and the conversation's MCP tools. */
  async function offeredTools(input: ConversationCall): Promise<ToolDescription[]> {
    const { mcpToolSet } = input.request;
    const mcpTools = mcpToolSet !== undefined ? await mcpToolSets?.get(input.conversation, mcpToolSet) : undefined;
    // Building the request is deterministic: what fails here would fail on every attempt (not retried).
    return buildingRequest(() =>
      input.request.tools.map((name) => {
        const tool = described.get(name) ?? mcpTools?.get(name);
        if (!tool) throw new Error(`Tool ${name} is not registered on this worker.`);
        return tool;
      }),
    );
  }

  /**
   * What the worker keeps of the conversation after this reply. A threaded reply leaves the transcript to the API's
   * thread: the worker keeps none (a call that cannot continue reads it by query). Without threads, or unthreaded, it
   * keeps the model context the request was built from, with the reply.
   */
  function keepModelContext(input: ConversationCall, sent: SentAttempt, reply: CallModelResult): void {
    const { thread, modelContext } = sent;
    if (thread && thread.mode !== 'unthreaded') cache.forget(input.conversation);
    else if (modelContext && reply.stop_reason !== 'max_tokens') {
      // The workflow appends exactly this message (same pure protocol code), so the next call needs only what follows;
      // after a compaction, like the workflow, it keeps only what the model still sees.
      const reading = readReply(protocolFor(input.request.protocol), reply, input.callNumber, modelContext.messages, {
        serverTools: offersServerTools(input.request.serverTools),
      });
      cache.remember(input.conversation, {
        ...(modelContext.system !== undefined && { system: modelContext.system }),
        messages: afterCompaction(
          withReply(modelContext.messages, {
            reply: reading.assistant,
            joinsPausedTurn: input.joinsPausedTurn === true,
            stopReason: reading.stopReason,
          }),
        ),
        lastReplyId: sent.message.id,
      });
    }
  }

  return { callModel };
}

/** A model call's input, with the conversation it belongs to. */
type ConversationCall = CallModelInput & { conversation: ConversationRun };

/** One attempt of a model call: its input, its activity context, what it billed, and its live reply (when streamed). */
interface Attempt {
  input: ConversationCall;
  context: Context;
  billing: AttemptBilling;
  live: LiveReplyHeartbeat | undefined;
  /** The call's rate-limit reservations, when the fleet's limiter is on. */
  limits: CallRateLimits | undefined;
  /** What each heartbeat carries besides a live reply. */
  details: () => object | undefined;
}

/** A request an attempt sent and the message it got back. */
type SentRequest = Omit<ThreadedReply<BetaMessage>, 'thread'> & { thread?: ThreadUse };

/** What an attempt sent and got back, and how large a prompt the API compacted in it was (managed-context.ts). */
interface SentAttempt extends SentRequest {
  compactedTokens: number | undefined;
}

/**
 * The request over `messages`: with the system prompt of the conversation's context when given (the call's own
 * otherwise), the offered tools, and context management.
 */
function requestBuilder(
  request: ModelRequestOptions,
  offered: readonly ToolDescription[],
): (messages: MessageParam[], system?: string) => BetaMessageStreamParams {
  return (messages, system) =>
    buildingRequest(() =>
      withContextManagement(
        buildModelRequest({ ...request, ...(system !== undefined && { system }) }, messages, offered),
        request.contextManagement,
      ),
    );
}

/** A call without threads: the whole conversation as one request. */
async function sendWhole(
  whole: () => Promise<WholeRequest>,
  send: (request: BetaMessageStreamParams) => Promise<BetaMessage>,
): Promise<SentRequest> {
  const { request, modelContext } = await whole();
  return { message: await send(request), request, modelContext };
}

/** Streams a request: what it bills is followed from its first event, and a live reply heartbeats it as it comes. */
function streamReply(
  anthropic: Anthropic,
  { context, billing, live, limits }: Attempt,
): (request: BetaMessageStreamParams) => Promise<BetaMessage> {
  return async (request) => {
    const key = await limits?.beforeSend(request);
    const stream = anthropic.beta.messages.stream(request, { signal: context.cancellationSignal });
    billing.follow(stream);
    if (live) stream.on('streamEvent', (event, snapshot) => live.onStreamEvent(event, snapshot));
    if (!limits || key === undefined) return stream.finalMessage();
    stream.on('connect', () => limits.onResponse(key, request.model, stream.response?.headers));
    try {
      const message = await stream.finalMessage();
      limits.afterReply(key, request.model, message, stream.response?.headers);
      return message;
    } catch (err) {
      limits.afterError(key, request.model, err);
      throw err;
    }
  };
}

/** What a failed attempt throws: its model failure (typed, with what the attempts billed), or the cancellation. */
function failureOf({ input, context, billing, live, details }: Attempt, err: unknown): unknown {
  // The last heartbeat (flushed with the failure) hands the total, and a reservation to take over, to the next attempt.
  if (live) live.beat();
  else if (billing.total() || err instanceof RateLimitWait) context.heartbeat(details());
  if (context.cancellationSignal.aborted) return err; // cancelled or timed out: Temporal already knows why
  if (err instanceof RateLimitWait) return waitFailure(err);
  const { fallbackAfter } = input;
  const fallback = fallbackAfter !== undefined ? { attempt: context.info.attempt, after: fallbackAfter } : undefined;
  return toModelFailure(err, billing.total(), fallback);
}

/**
 * A reply block as the activity's result records it: response fields that say nothing dropped (`citations: null`,
 * `caller: {type: 'direct'}`) to keep histories readable, and a tool input nested too deep for the workflow cut to
 * one level past the limit (cutDeepInput), so that the result can be serialised at all and the workflow refuses the
 * call as nested too deep — exactly as the transcript cache above read it.
 */
export function forTheHistory(block: ReplyBlock): ReplyBlock {
  const entries = Object.entries(block).filter(
    ([key, value]) => value !== null && !(key === 'caller' && (value as { type?: string }).type === 'direct'),
  );
  const kept = Object.fromEntries(entries) as ReplyBlock;
  return kept.type === 'tool_use' ? { ...kept, input: cutDeepInput(kept.input) } : kept;
}
