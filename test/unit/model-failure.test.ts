// The error classifier: which model failures Temporal retries, and after how long.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import {
  buildingRequest,
  classifyModelError,
  ModelRequestInvalid,
  requestedDelayMs,
  toModelFailure,
} from '../../activities/model-failure';
import { buildModelRequest } from '../../activities/model-request';
import { NATIVE_REQUEST_OPTIONS } from '../support/model-request-fixtures';

function apiError(status: number, type: string, headers: Record<string, string> = {}) {
  return Anthropic.APIError.generate(
    status,
    { type: 'error', error: { type, message: `${type} happened` } },
    undefined,
    new Headers(headers),
  );
}

describe('classifier', () => {
  for (const [status, type] of [
    [408, 'ModelRequestTimeout'],
    [409, 'ModelConflict'],
    [429, 'ModelRateLimited'],
    [500, 'ModelServerError'],
    [502, 'ModelServerError'],
    [503, 'ModelServerError'],
    [504, 'ModelServerError'],
    [529, 'ModelOverloaded'],
  ] as const) {
    test(`classifier: ${status} → ${type}, retryable`, () => {
      assert.deepEqual(classifyModelError(apiError(status, 'x')), { type, retryable: true });
    });
  }
  for (const [status, type] of [
    [400, 'ModelInvalidRequest'],
    [401, 'ModelAuthentication'],
    [402, 'ModelBilling'],
    [403, 'ModelPermissionDenied'],
    [404, 'ModelNotFound'],
    [413, 'ModelRequestTooLarge'],
    [422, 'ModelHttp422'],
  ] as const) {
    test(`classifier: ${status} → ${type}, not retryable`, () => {
      assert.deepEqual(classifyModelError(apiError(status, 'x')), { type, retryable: false });
    });
  }
  test('classifier: x-should-retry wins over the status', () => {
    assert.equal(classifyModelError(apiError(500, 'api_error', { 'x-should-retry': 'false' })).retryable, false);
    assert.equal(
      classifyModelError(apiError(400, 'invalid_request_error', { 'x-should-retry': 'true' })).retryable,
      true,
    );
  });
  test('classifier: connection errors and timeouts retry', () => {
    assert.deepEqual(classifyModelError(new Anthropic.APIConnectionError({ message: 'reset' })), {
      type: 'ModelConnectionError',
      retryable: true,
    });
    assert.deepEqual(classifyModelError(new Anthropic.APIConnectionTimeoutError()), {
      type: 'ModelTimeout',
      retryable: true,
    });
  });
  test('classifier: an error event in the middle of a stream retries', () => {
    const midStream = new Anthropic.APIError(
      undefined,
      { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      undefined,
      new Headers(),
      'overloaded_error',
    );
    assert.deepEqual(classifyModelError(midStream), { type: 'ModelStreamError', retryable: true });
  });
});

describe('server-requested delays', () => {
  test('retry-after-ms wins over retry-after', () => {
    assert.equal(requestedDelayMs(new Headers({ 'retry-after-ms': '1500', 'retry-after': '9' })), 1500);
  });
  test('retry-after in seconds', () => assert.equal(requestedDelayMs(new Headers({ 'retry-after': '2' })), 2000));
  test('retry-after as an HTTP date', () => {
    const now = Date.parse('2026-11-22T00:00:00Z');
    assert.equal(requestedDelayMs(new Headers({ 'retry-after': 'Sun, 22 Nov 2026 00:00:03 GMT' }), now), 3000);
  });
  test('no header, no delay', () => assert.equal(requestedDelayMs(new Headers()), undefined));
});

describe('the failure a model activity throws', () => {
  test('a 429 with retry-after becomes a retryable failure with nextRetryDelay', () => {
    const failure = toModelFailure(apiError(429, 'rate_limit_error', { 'retry-after': '3' }));
    assert.equal(failure.type, 'ModelRateLimited');
    assert.equal(failure.nonRetryable, false);
    assert.equal(failure.nextRetryDelay, 3000);
  });
  test('a 400 becomes a non-retryable failure whose message carries the API message', () => {
    const failure = toModelFailure(apiError(400, 'invalid_request_error'));
    assert.equal(failure.type, 'ModelInvalidRequest');
    assert.equal(failure.nonRetryable, true);
    assert.match(failure.message, /400 invalid_request_error: invalid_request_error happened/);
  });
});

describe('a request that cannot be built', () => {
  test('is not retried: an error thrown before any HTTP call would be thrown again on every attempt', () => {
    assert.deepEqual(classifyModelError(new ModelRequestInvalid('x')), {
      type: 'ModelRequestInvalid',
      retryable: false,
    });
    assert.deepEqual(classifyModelError(new RangeError('Maximum call stack size exceeded')), {
      type: 'ModelCallError',
      retryable: true,
    });
  });

  test('a 10,000-deep answer schema (past the options check) fails the turn at once as ModelRequestInvalid', () => {
    let schema: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 10_000; i++) schema = { type: 'object', properties: { a: schema } };
    const output = { schema, mode: 'native' as const, toolName: 'final_answer' };
    const error = (() => {
      try {
        buildingRequest(() => buildModelRequest({ ...NATIVE_REQUEST_OPTIONS, output }, [], []));
      } catch (err) {
        return err;
      }
      return assert.fail('the request was built');
    })();
    assert.ok(error instanceof ModelRequestInvalid);
    assert.match(error.message, /^The request could not be built: RangeError: Maximum call stack size exceeded/);
    const failure = toModelFailure(error);
    assert.equal(failure.type, 'ModelRequestInvalid');
    assert.equal(failure.nonRetryable, true);
  });

  test('what the builder threw is cut to a bounded, well-formed message', () => {
    const error = (() => {
      try {
        buildingRequest(() => {
          throw new Error(`\ud800${'x'.repeat(100_000)}`);
        });
      } catch (err) {
        return err as Error;
      }
      return assert.fail('nothing was thrown');
    })();
    assert.ok(error.message.length < 1_100);
    assert.ok(!error.message.includes('\ud800'));
  });
});
