// What stands in for a payload the worker could not read (common/converters/payload-converter.ts): a value, so the
// workflow's own checks refuse it with a clear message instead of the SDK failing the workflow task on every retry.
// Pure and workflow-safe.

/** The encoding of a payload a codec could not decode (workers/worker-data-converter.ts); its data is the reason. */
export const UNDECODABLE_ENCODING = 'binary/undecodable';

export interface UndecodablePayload {
  /** Why it could not be read (bounded, well-formed). */
  undecodablePayload: string;
}

export function isUndecodable(value: unknown): value is UndecodablePayload {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Partial<UndecodablePayload>).undecodablePayload === 'string'
  );
}
