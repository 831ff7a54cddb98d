// The failure converter of workers without payload encryption (DataConverter.failureConverterPath): the SDK's, with
// every message and stack trace well-formed and bounded (bounded-failure-converter.ts). Loaded by path, also inside
// the workflow bundle.
import { BoundedFailureConverter } from './bounded-failure-converter';

export const failureConverter = new BoundedFailureConverter();
