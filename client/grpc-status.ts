// The gRPC status behind an error Temporal's client threw, wherever in its cause chain: RESOURCE_EXHAUSTED (a limit
// such as the updates a workflow may have in flight) and UNAVAILABLE (the server cannot be reached) mean "try again
// soon", not "this failed".
import { isGrpcServiceError } from '@temporalio/client';

/** gRPC status codes (https://grpc.github.io/grpc/core/md_doc_statuscodes.html) a caller acts on. */
export const GrpcStatus = { CANCELLED: 1, DEADLINE_EXCEEDED: 4, RESOURCE_EXHAUSTED: 8, UNAVAILABLE: 14 } as const;

export function grpcStatusOf(err: unknown): number | undefined {
  for (let cause = err, depth = 0; cause instanceof Error && depth < 10; depth++) {
    if (isGrpcServiceError(cause)) return cause.code;
    cause = cause.cause;
  }
  return undefined;
}

/** Whether the call may go through if made again a little later. */
export function isTemporaryGrpcRefusal(err: unknown): boolean {
  const status = grpcStatusOf(err);
  return status === GrpcStatus.RESOURCE_EXHAUSTED || status === GrpcStatus.UNAVAILABLE;
}
