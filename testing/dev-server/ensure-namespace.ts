// Creating a namespace on a server that lacks it (a reused server, not the dev server we start with --namespace).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { GRPC_ALREADY_EXISTS, GRPC_NOT_FOUND, grpcCode } from './grpc-errors';

/** Creates `namespace` on a server that does not have it yet, and waits until it can be described. */
export async function ensureNamespace(connection: Connection, namespace: string): Promise<void> {
  const describe = (): Promise<unknown> =>
    connection.withDeadline(Date.now() + 5000, () => connection.workflowService.describeNamespace({ namespace }));
  try {
    await describe();
    return;
  } catch (error) {
    if (grpcCode(error) !== GRPC_NOT_FOUND) throw error;
  }
  try {
    await connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs('1 day'),
    });
  } catch (error) {
    if (grpcCode(error) !== GRPC_ALREADY_EXISTS) throw error;
  }
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await describe();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(500);
    }
  }
}
