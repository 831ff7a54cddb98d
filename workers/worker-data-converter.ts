// The data converter a conversation worker runs with: the caller's (payload encryption, say), completed so that no
// payload and no failure can stop the worker or wedge a conversation —
//   - the lenient payload converter (common/converters/payload-converter.ts): a payload that cannot be read becomes a
//     value the workflow refuses, instead of a decoding exception that fails the workflow task on every retry;
//   - a failure converter that bounds every message and makes it well-formed (common/converters/);
//   - each payload codec decoding one payload at a time, a payload it cannot decode marked undecodable (its reason
//     kept) rather than failing the whole activation: a plain payload sent by the Temporal CLI to an encrypting
//     deployment, or a forged "encrypted" one, is refused by the conversation like any other bad input.
// The pre-built workflow bundles are built with the same converter paths (workflow-bundles.ts).
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { encode } from '@temporalio/common/lib/encoding';
import { UNDECODABLE_ENCODING } from '../common/undecodable';
import { truncate } from '../common/safe-text';

export const PAYLOAD_CONVERTER_PATH = require.resolve('../common/converters/payload-converter');
/** The failure converter of workers without encryption (codec/failure-converter.ts is the encrypting one). */
export const PLAIN_FAILURE_CONVERTER_PATH = require.resolve('../common/converters/failure-converter');

export function workerDataConverter(given: DataConverter = {}): DataConverter {
  return {
    ...given,
    payloadConverterPath: given.payloadConverterPath ?? PAYLOAD_CONVERTER_PATH,
    failureConverterPath: given.failureConverterPath ?? PLAIN_FAILURE_CONVERTER_PATH,
    ...(given.payloadCodecs && { payloadCodecs: given.payloadCodecs.map((codec) => new MarkingCodec(codec)) }),
  };
}

/** Decodes payloads one by one; one it cannot decode becomes an UNDECODABLE_ENCODING payload holding the reason. */
export class MarkingCodec implements PayloadCodec {
  constructor(readonly inner: PayloadCodec) {}

  encode(payloads: Payload[]): Promise<Payload[]> {
    return this.inner.encode(payloads);
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.all(
      payloads.map(async (payload) => {
        try {
          const [decoded] = await this.inner.decode([payload]);
          return decoded!;
        } catch (err) {
          const reason = truncate(err instanceof Error ? err.message : String(err), 500);
          return { metadata: { encoding: encode(UNDECODABLE_ENCODING) }, data: encode(reason) };
        }
      }),
    );
  }
}
