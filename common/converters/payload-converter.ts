// The payload converter of the project's workers (DataConverter.payloadConverterPath): the SDK's default, except that a
// payload it cannot read becomes an `UndecodablePayload` value instead of an exception. The SDK decodes a workflow's
// start input and a signal's arguments before any code of ours runs, and a decoding exception there fails the
// workflow task again on every retry: a caller with namespace access could wedge a conversation with one payload of an
// unknown encoding (`--input-meta encoding=binary/evil`) or with `json/plain` bytes that are not JSON. As a value it
// reaches the workflow's own checks, which refuse it with a clear message (workflow-messages.ts's schemas, the start
// input check). A payload the worker's codec could not decrypt arrives here marked the same way (aes-gcm-codec.ts).
// Loaded by path, also inside the workflow bundle: @temporalio/common and pure code only.
import {
  type ConverterHint,
  DefaultPayloadConverter,
  type Payload,
  type SerializationContext,
} from '@temporalio/common';
import { decode } from '@temporalio/common/lib/encoding';
import { truncate } from '../safe-text';
import { UNDECODABLE_ENCODING, type UndecodablePayload } from '../undecodable';

export class LenientPayloadConverter extends DefaultPayloadConverter {
  override fromPayload<T>(payload: Payload, context?: SerializationContext, hint?: ConverterHint<T>): T {
    try {
      const encoding = payload.metadata?.encoding ? decode(payload.metadata.encoding) : '';
      if (encoding === UNDECODABLE_ENCODING) {
        const marked: UndecodablePayload = {
          undecodablePayload: truncate(decode(payload.data ?? new Uint8Array()), 500),
        };
        return marked as T;
      }
      return super.fromPayload(payload, context, hint);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      return { undecodablePayload: truncate(reason, 500) } as T;
    }
  }
}

export const payloadConverter = new LenientPayloadConverter();
