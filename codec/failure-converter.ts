// The failure converter used with payload encryption: a failure's message and stack trace are not payloads, so the
// default converter stores them in plain text (a tool's error message can quote the conversation). With
// `encodeCommonAttributes` they move into the failure's `encodedAttributes` payload, which the codec encrypts; the
// stored failure message reads "Encoded failure". SDK clients, the codec server and the Web UI decode it back. Like
// every failure converter of the project's workers, it first makes each message well-formed and bounded.
//
// Loaded by path (DataConverter.failureConverterPath), in the worker and inside the workflow bundle, so it must stay
// deterministic: @temporalio/common and pure code only.
import { BoundedFailureConverter } from '../common/converters/bounded-failure-converter';

export const failureConverter = new BoundedFailureConverter({ encodeCommonAttributes: true });
