// Worker Deployments (docs/upgrading.md): promoting a build to its deployment's current version, the one new
// conversations start on and every conversation's next run continues on. What `claude-temporal-orchestrator promote`
// runs; the same as `temporal worker deployment set-current-version`.
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import { parseArgument } from './call-arguments';

/** A deployment's name or a build id as Temporal takes them: printable text, at most 255 characters. */
const nameSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(255, 'must be at most 255 characters')
  .regex(/^[^\p{Cc}]+$/u, 'must be printable text');

export interface PromoteBuildOptions {
  /** The deployment (TEMPORAL_DEPLOYMENT_NAME of its workers). */
  deploymentName: string;
  /** The build to make current (TEMPORAL_BUILD_ID of its workers); its workers must already poll the task queue. */
  buildId: string;
  /** Who asked, as the deployment's history records it. */
  identity?: string;
}

/** What the deployment's current build was before, and is now. */
export interface PromotedBuild {
  deploymentName: string;
  buildId: string;
  /** The build that was current before (undefined: unversioned workers were). */
  previousBuildId?: string;
}

/**
 * Makes `buildId` the current build of `deploymentName`: new conversations start on it, pinned runs of older builds
 * stay where they are and move to it at their next continue-as-new. Promoting an older build is the rollback.
 */
export async function promoteBuild(client: Client, options: PromoteBuildOptions): Promise<PromotedBuild> {
  const deploymentName = parseArgument(nameSchema, options.deploymentName, 'promoteBuild', 'deploymentName');
  const buildId = parseArgument(nameSchema, options.buildId, 'promoteBuild', 'buildId');
  const response = await client.workflowService.setWorkerDeploymentCurrentVersion({
    namespace: client.options.namespace,
    deploymentName,
    buildId,
    identity: options.identity ?? client.options.identity ?? 'claude-temporal-orchestrator',
  });
  const previous = response.previousDeploymentVersion?.buildId;
  return { deploymentName, buildId, ...(previous && { previousBuildId: previous }) };
}
