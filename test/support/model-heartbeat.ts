// The running model call's last heartbeat, as Temporal holds it: the live relay's address (and the conversation's
// feed) a reader finds the reply at while it streams.
import type { Client } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { MODEL_ACTIVITY } from '../../common/activity-contracts';
import type { LiveReply } from '../../streaming/stream-events';

/** The conversation's running model call's last heartbeat; undefined while no call runs or it has not beaten yet. */
export async function modelHeartbeatOf(client: Client, id: string): Promise<LiveReply | undefined> {
  const { raw } = await client.workflow.getHandle(id).describe();
  const model = raw.pendingActivities?.find((a) => a.activityType?.name === MODEL_ACTIVITY);
  const payloads = model?.heartbeatDetails?.payloads;
  if (!payloads?.length) return undefined;
  return decodeFromPayloadsAtIndex<LiveReply>(client.options.loadedDataConverter, 0, payloads);
}
