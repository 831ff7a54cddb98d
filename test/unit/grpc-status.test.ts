// Which refusals from Temporal a reader rides out (it reads again at its next look) and which end it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServiceError } from '@temporalio/client';
import { refusedWhileTaskFails } from '../../client/errors';
import { GrpcStatus, grpcStatusOf, isTemporaryGrpcRefusal, mayAnswerLater } from '../../client/grpc-status';

/** What @grpc/grpc-js throws (a code, its details, the metadata), wrapped as Temporal's client rethrows it from a query ("Failed to query Workflow"). */
function refusedQuery(code: number, details: string): ServiceError {
  const grpc = Object.assign(new Error(`${code} ${details}`), { code, details, metadata: {} });
  return new ServiceError('Failed to query Workflow', { cause: grpc });
}

test('the status is found through the cause chain Temporal wraps it in', () => {
  assert.equal(grpcStatusOf(refusedQuery(GrpcStatus.UNAVAILABLE, 'buffered query cleared, please retry')), 14);
  assert.equal(grpcStatusOf(new ServiceError('Unexpected error while making gRPC request')), undefined);
});

test('a query refused while a workflow moves between workers may be answered later', () => {
  const passing = [
    refusedQuery(GrpcStatus.DEADLINE_EXCEEDED, 'context deadline exceeded'),
    refusedQuery(GrpcStatus.UNAVAILABLE, 'buffered query cleared, please retry'),
    refusedQuery(9, 'Unable to query workflow due to Workflow Task in failed state.'), // FAILED_PRECONDITION
    refusedQuery(13, 'query entered invalid state, this should be impossible'), // INTERNAL
    refusedQuery(2, 'Received RST_STREAM with code 2'), // UNKNOWN
  ];
  for (const err of passing) assert.ok(mayAnswerLater(err), err.cause?.message);
  // Only the overload and reachability statuses count as a refusal "for now" everywhere else.
  assert.deepEqual(
    passing.map((err) => isTemporaryGrpcRefusal(err)),
    [false, true, false, false, false],
  );
});

test('a bad query, no such workflow, no right to it, or an error that is not a gRPC status: the same call fails again', () => {
  const final = [
    refusedQuery(GrpcStatus.INVALID_ARGUMENT, 'unknown queryType getStreamEvents'),
    refusedQuery(GrpcStatus.NOT_FOUND, 'workflow not found'),
    refusedQuery(GrpcStatus.PERMISSION_DENIED, 'Request unauthorized.'),
    refusedQuery(GrpcStatus.UNIMPLEMENTED, 'unknown method'),
    refusedQuery(GrpcStatus.UNAUTHENTICATED, 'missing API key'),
    new ServiceError('Unexpected error while making gRPC request', { cause: new TypeError('bad payload') }),
  ];
  for (const err of final) assert.equal(mayAnswerLater(err), false, err.cause?.message);
});

test("an update refused while the workflow's task is being retried is sent again; other refusals are not", () => {
  const refusedUpdate = (code: number, details: string) =>
    new ServiceError('Failed to execute update', {
      cause: Object.assign(new Error(`${code} ${details}`), { code, details, metadata: {} }),
    });
  assert.ok(
    refusedWhileTaskFails(
      refusedUpdate(9, 'Unable to perform workflow execution update due to Workflow Task in failed state.'),
    ),
  );
  assert.ok(!refusedWhileTaskFails(refusedUpdate(9, 'no poller seen for task queue recently, worker may be down')));
  assert.ok(!refusedWhileTaskFails(refusedUpdate(GrpcStatus.NOT_FOUND, 'Workflow Task in failed state.')));
  assert.ok(!refusedWhileTaskFails(new Error('Workflow Task in failed state')));
});
