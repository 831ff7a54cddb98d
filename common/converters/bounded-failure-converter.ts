// Every failure a workflow or activity sends to Temporal goes through its failure converter: the one place where a
// message or a stack trace can be made safe to send, whatever threw it and whatever it quotes. Each one is made
// well-formed (a lone surrogate there stops the worker: its core cannot decode the completion) and bounded (a
// message of megabytes exceeds the gRPC limit and fails the workflow task for ever). With `encodeCommonAttributes`
// (payload encryption) the bounded message and stack then move into the encrypted payload, as the SDK's converter does.
// Loaded by path into the workflow bundle: @temporalio/common and pure code only.
import { DefaultFailureConverter, type PayloadConverter, type ProtoFailure } from '@temporalio/common';
import { truncate } from '../safe-text';

export const MAX_FAILURE_MESSAGE_CHARS = 8_000;
export const MAX_FAILURE_STACK_CHARS = 16_000;

export class BoundedFailureConverter extends DefaultFailureConverter {
  private readonly encode: boolean;

  constructor(options: { encodeCommonAttributes?: boolean } = {}) {
    super({ encodeCommonAttributes: false });
    this.encode = options.encodeCommonAttributes ?? false;
  }

  // Causes are converted by this same method (the SDK recurses through it), so each level is bounded once.
  override errorToFailure(err: unknown, payloadConverter: PayloadConverter): ProtoFailure {
    const failure = { ...this.errorToFailureInner(err, payloadConverter) };
    const message = truncate(failure.message ?? '', MAX_FAILURE_MESSAGE_CHARS);
    const stackTrace = truncate(failure.stackTrace ?? '', MAX_FAILURE_STACK_CHARS);
    if (!this.encode) return { ...failure, message, stackTrace };
    return {
      ...failure,
      message: 'Encoded failure',
      stackTrace: '',
      encodedAttributes: payloadConverter.toPayload({ message, stack_trace: stackTrace }),
    };
  }
}
