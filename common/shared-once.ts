// Values built once per worker and shared by every workflow run on it: the zod schemas workflow code checks its inputs
// with. Workflow modules are evaluated again for every run, so a schema built at module level is built again, and its
// lazy parts filled in again on its first check, by every conversation's start: most of the CPU of that start. This
// module is loaded once per worker (workflows/shared-libraries.ts preloads it), so a value built here is built by the
// first run that needs it and kept for every later run. The SDK deep-freezes what shared modules export, not this map,
// so zod can still fill in a schema's lazy parts. Only for values that hold nothing of a run and that nothing changes
// (schemas are pure checks). Outside workflows it is a plain cache.
const built = new Map<string, unknown>();

/** The value built under `key` (`module.name`, one per value), built now if no run has yet. */
export function sharedOnce<T>(key: string, build: () => T): T {
  if (built.has(key)) return built.get(key) as T;
  const value = build();
  built.set(key, value);
  return value;
}

/** The same, built on first use: for schemas that only some runs need (a carried state, a carried log). */
export function sharedLazy<T>(key: string, build: () => T): () => T {
  return () => sharedOnce(key, build);
}
