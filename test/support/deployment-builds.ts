// What the rolling-deploy tests ask of Worker Deployments: promote a build as soon as the server accepts it (it refuses
// a build none of whose workers has polled yet), and the build a conversation's run is on.
import type { Client } from '@temporalio/client';
import { promoteBuild } from '../../client/worker-deployments';
import { waitUntil } from './wait-until';

export function promoteWhenPolled(client: Client, deploymentName: string, buildId: string) {
  return waitUntil(`build ${buildId} promoted`, () =>
    promoteBuild(client, { deploymentName, buildId }).catch(() => false as const),
  );
}

/** The build, and the versioning behaviour, of the workflow's current run. */
export async function versioningOf(client: Client, workflowId: string) {
  const { raw } = await client.workflow.getHandle(workflowId).describe();
  const info = raw.workflowExecutionInfo?.versioningInfo;
  return { buildId: info?.deploymentVersion?.buildId ?? undefined, behavior: info?.behavior ?? undefined };
}
