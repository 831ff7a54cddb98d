// Updates a conversation holds, read from its history: each accepted update is written there, and so is its
// completion. Temporal lets a workflow have only a few in flight (`history.maxInFlightUpdates`, 10 by default).
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { ConversationClient } from '../../client/conversation-client';
import { type Harness, namespace, temporalAddress } from './harness';

const EventType = temporal.api.enums.v1.EventType;

/** The updates named `name` in the current run's history: accepted in all, in flight now, and most in flight at once. */
export async function updatesOf(
  client: Client,
  workflowId: string,
  name: string,
): Promise<{ accepted: number; inFlight: number; mostAtOnce: number }> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const open = new Set<string>();
  let accepted = 0;
  let mostAtOnce = 0;
  for (const event of history.events ?? []) {
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED) {
      const request = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest;
      if (request?.input?.name !== name) continue;
      open.add(request.meta?.updateId ?? '');
      accepted++;
      mostAtOnce = Math.max(mostAtOnce, open.size);
    }
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED) {
      open.delete(event.workflowExecutionUpdateCompletedEventAttributes?.meta?.updateId ?? '');
    }
  }
  return { accepted, inFlight: open.size, mostAtOnce };
}

const RESOURCE_EXHAUSTED = 8;

/**
 * A client of its own whose calls Temporal refused with RESOURCE_EXHAUSTED (out of update slots) are counted: its
 * connection retries them, as every client's does, so a refusal would otherwise only show as delay.
 */
export async function slotCountingClient(
  h: Harness,
  tools: string[],
): Promise<{ conversations: ConversationClient; exhausted: { count: number }; close(): Promise<void> }> {
  const exhausted = { count: 0 };
  const retry = defaultGrpcRetryOptions();
  const connection = await Connection.connect({
    address: temporalAddress,
    interceptors: [
      makeGrpcRetryInterceptor({
        ...retry,
        retryableDecider(attempt, status) {
          if (status.code === RESOURCE_EXHAUSTED) exhausted.count++;
          return retry.retryableDecider(attempt, status);
        },
      }),
    ],
  });
  const conversations = new ConversationClient({
    client: new Client({ connection, namespace }),
    taskQueue: h.taskQueue,
    tools,
  });
  return { conversations, exhausted, close: () => connection.close() };
}
