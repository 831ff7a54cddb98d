// The gRPC status behind an error Temporal's client threw, wherever in its cause chain: RESOURCE_EXHAUSTED (a limit
// such as the updates a workflow may have in flight) and UNAVAILABLE (the server cannot be reached) mean "try again
// soon", not "this failed".
import { isGrpcServiceError } from '@temporalio/client';

/** gRPC status codes (https://grpc.github.io/grpc/core/md_doc_statuscodes.html) a caller acts on. */
export const GrpcStatus = {
  CANCELLED: 1,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  UNIMPLEMENTED: 12,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/** Statuses that say the same call will fail again: a bad request, no such workflow or query, no right to it. */
const FINAL_STATUSES: ReadonlySet<number> = new Set([
  GrpcStatus.INVALID_ARGUMENT,
  GrpcStatus.NOT_FOUND,
  GrpcStatus.PERMISSION_DENIED,
  GrpcStatus.UNIMPLEMENTED,
  GrpcStatus.UNAUTHENTICATED,
]);

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

/**
 * Whether a call the server refused with a gRPC status may go through later: every status but the final ones. While
 * a worker is killed and replaced, a query meets more than DEADLINE_EXCEEDED (the workflow not ready, the sticky queue
 * being cleared, a stream reset); an error that is not a gRPC status (a payload that does not decode) is final.
 */
export function mayAnswerLater(err: unknown): boolean {
  const status = grpcStatusOf(err);
  return status !== undefined && !FINAL_STATUSES.has(status);
}
