// The import graph's rules, checked by dependency-cruiser: `npm run lint`, and test/tooling/import-rules.test.ts in
// `npm test`. No circles; product code never imports the rigs; the workflow side imports nothing of the Node side; the
// parts below an entry point never import it. A broken rule prints its name, the import, and its comment below: why
// the rule holds and what to do instead. An import that must break a rule is an exception at the end, with its reason.
//
// Type-only imports count (tsPreCompilationDeps): they vanish from the compiled code, but a reader still needs the
// other file to read this one, and a circle of types is how `common/` grew eleven files that all needed each other.

/** The folders that ship (and `streaming/`, the live-streaming subsystem's own folder). */
const PRODUCT = '^(workflows|activities|workers|client|common|gateway|tracing|codec|streaming)/';
/** Deterministic code the workflow bundle holds: only types and pure helpers (eslint.config.mjs checks the rest). */
const WORKFLOW_SIDE = ['^workflows/', '^common/', '^streaming/workflow/', '^streaming/[^/]+\\.ts$'];
/** Code that runs in Node outside the workflow sandbox: the worker's activities, the client, the servers. */
const NODE_SIDE = ['^(activities|workers|client|gateway|tracing|codec)/', '^streaming/(?!workflow/)[^/]+/'];

const rules = [
  {
    name: 'no-circular',
    severity: 'error',
    comment:
      'These files import each other (a type-only import counts). Move what they share, often a type, into a leaf file ' +
      'both import (as common/usage.ts holds TokenUsage and common/tool-policy.ts ToolPolicy), so imports run one way.',
    from: {},
    to: { circular: true },
  },
  {
    name: 'product-imports-no-rig',
    severity: 'error',
    comment:
      'Product code (what the package ships) imports nothing from testing/, test/, scripts/ or examples/: they build ' +
      'on it, not it on them. Move what both need into the product folder it belongs to.',
    from: { path: PRODUCT },
    to: { path: '^(testing|test|scripts|examples)/' },
  },
  {
    name: 'workflow-side-imports-no-node-side',
    severity: 'error',
    comment:
      'Workflow code (workflows/, common/, streaming/workflow/ and streaming/ leaves) runs in the deterministic ' +
      'sandbox: it imports nothing from activities/, workers/, client/, gateway/, tracing/, codec/ or the other ' +
      'sides of streaming/. Move the shared shape into common/ (or a streaming/ leaf) and import it from both sides.',
    from: { path: WORKFLOW_SIDE },
    to: { path: NODE_SIDE },
  },
  {
    name: 'no-import-up-into-entry-points',
    severity: 'error',
    comment:
      'activities/, codec/ and tracing/ are what workers/, client/ and gateway/ build on: they import none of them. ' +
      'Move the value down (as tracing/workflow-interceptors.ts holds the path workers/workflow-bundles.ts uses).',
    from: { path: '^(activities|codec|tracing)/' },
    to: { path: '^(workers|client|gateway)/' },
  },
  {
    name: 'client-imports-no-gateway-or-workers',
    severity: 'error',
    comment:
      'The gateway builds on the client, and a client needs no worker: client/ imports nothing from gateway/ or ' +
      'workers/. Move what both need into client/ or common/.',
    from: { path: '^client/' },
    to: { path: '^(gateway|workers)/' },
  },
];

/** Imports that break a rule on purpose, each with its reason (repeated in a comment at the import). */
const EXCEPTIONS = [
  {
    rule: 'product-imports-no-rig',
    from: '^workers/main\\.ts$',
    to: '^testing/demo-tools/',
    because:
      "workers/main.ts is this repository's own worker (npm run worker, the Docker image's command; the package " +
      'leaves it out), and the tools it runs are the demo tools of the testing kit.',
  },
  {
    rule: 'client-imports-no-gateway-or-workers',
    from: '^client/cli\\.ts$',
    to: '^(gateway/(main|usage)|workers/replay-check)\\.ts$',
    because:
      "the CLI's `gateway` command runs the gateway (gateway/main.ts, required only for that command) and prints " +
      "its help (gateway/usage.ts), and its `replay-check` command replays with the worker's SDK " +
      '(workers/replay-check.ts, required only for that command).',
  },
];

/**
 * The rules with their exceptions: the excepted file leaves the rule, and a rule of the same name holds it to
 * everything but the import it is excused for.
 */
function withExceptions(rule) {
  const excepted = EXCEPTIONS.filter((exception) => exception.rule === rule.name);
  if (excepted.length === 0) return [rule];
  const pathNot = [rule.from.pathNot ?? [], excepted.map((exception) => exception.from)].flat();
  return [
    { ...rule, from: { ...rule.from, pathNot } },
    ...excepted.map((exception) => ({
      ...rule,
      comment: `${rule.comment} (Excepted: ${exception.to}, because ${exception.because})`,
      from: { path: exception.from },
      to: { ...rule.to, pathNot: exception.to },
    })),
  ];
}

module.exports = {
  forbidden: rules.flatMap(withExceptions),
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    // Build output, caches and the bench's peer install are not the project's code.
    exclude: { path: '(^|/)node_modules/|^(dist|results|test-artifacts|\\.cache|scripts/bench/peer)/' },
  },
};
