// A value built on first use and kept: for schemas that only some workflow runs need. Workflow code is evaluated
// again for every run (its modules are per run), so a schema built at module level costs every conversation's start,
// whether or not the run ever checks one; built here, it costs only the runs that do.

export function once<T>(build: () => T): () => T {
  let value: { built: T } | undefined;
  return () => (value ??= { built: build() }).built;
}
