import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ActivityFailure, ApplicationFailure, RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import type { ToolPolicy } from '../../common/activity-contracts';
import { describeToolFailure } from '../../workflows/tool-failure';

const policy: ToolPolicy = {
  name: 'get_weather',
  startToCloseTimeout: '30 seconds',
  heartbeatTimeout: '10 seconds',
  maximumAttempts: 3,
  initialInterval: '1 second',
  requiresApproval: false,
};
const failed = (cause: Error): ActivityFailure =>
  new ActivityFailure(
    'Activity task failed',
    'get_weather',
    'tool-toolu_1',
    RetryState.MAXIMUM_ATTEMPTS_REACHED,
    'worker',
    cause,
  );

describe('what the model reads when a tool call failed for good', () => {
  test('a tool that ran out of time names the time limit and the attempts', () => {
    const failure = failed(new TimeoutFailure('activity StartToClose timeout', undefined, TimeoutType.START_TO_CLOSE));
    assert.equal(
      describeToolFailure('get_weather', policy, failure),
      'TimeoutError: get_weather did not finish within 30 seconds (3 attempt(s)).',
    );
  });

  test('a worker that went silent is told apart from a slow tool', () => {
    const failure = failed(new TimeoutFailure('activity Heartbeat timeout', undefined, TimeoutType.HEARTBEAT));
    assert.equal(
      describeToolFailure('get_weather', policy, failure),
      'TimeoutError: get_weather sent no heartbeat for 10 seconds; its worker stopped answering (3 attempt(s)).',
    );
  });

  test("a tool's own error keeps its type and message, so the model can correct its input", () => {
    const failure = failed(
      ApplicationFailure.create({
        type: 'TickerNotFound',
        message: 'no ticker for "Genral Motors"',
        nonRetryable: true,
      }),
    );
    assert.equal(
      describeToolFailure('get_ticker_symbol', policy, failure),
      'TickerNotFound: no ticker for "Genral Motors"',
    );
  });

  test('an untyped error still says what it was', () => {
    assert.equal(
      describeToolFailure('get_weather', policy, failed(new ApplicationFailure('socket hang up'))),
      'Error: socket hang up',
    );
    assert.equal(
      describeToolFailure(
        'get_weather',
        policy,
        new ActivityFailure('lost', 'get_weather', 'a', RetryState.NON_RETRYABLE_FAILURE, 'w'),
      ),
      'Error: lost',
    );
  });
});
