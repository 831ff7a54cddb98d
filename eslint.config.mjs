// Lint rules that matter here: workflow code must stay deterministic, so `workflows/`, the streaming log's workflow
// side (`streaming/workflow/`) and the layers it shares with the client and the activities (`common/`, the streaming
// types at `streaming/`'s root) may import only types and pure helpers — no Node built-ins, no SDK
// values, nothing that does I/O. zod is allowed: it is pure, and the workflow checks its inputs with the same
// schemas the client uses.
import tseslint from 'typescript-eslint';

const nodeBuiltins = [
  'assert',
  'buffer',
  'child_process',
  'cluster',
  'crypto',
  'dgram',
  'dns',
  'events',
  'fs',
  'fs/promises',
  'http',
  'http2',
  'https',
  'net',
  'os',
  'path',
  'perf_hooks',
  'process',
  'readline',
  'stream',
  'timers',
  'tls',
  'url',
  'util',
  'v8',
  'vm',
  'worker_threads',
  'zlib',
];

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'results/**', 'test-artifacts/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  {
    files: ['workflows/**/*.ts', 'common/**/*.ts', 'streaming/*.ts', 'streaming/workflow/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins
            .flatMap((name) => [name, `node:${name}`])
            .map((name) => ({
              name,
              message:
                'Workflow code is deterministic: no Node built-ins in workflows/, common/, streaming/workflow/ or the streaming types.',
            })),
          patterns: [
            {
              group: ['@anthropic-ai/sdk', '@anthropic-ai/sdk/*'],
              allowTypeImports: true,
              message: 'Workflow code may import only types from the Anthropic SDK.',
            },
            {
              group: ['@temporalio/client', '@temporalio/worker', '@temporalio/activity'],
              allowTypeImports: true,
              message: 'Workflow code may import only @temporalio/workflow and @temporalio/common.',
            },
            {
              group: [
                '**/activities/*',
                '**/activities',
                '**/workers/*',
                '**/streaming/worker/*',
                '../worker/*',
                './worker/*',
                '**/client/*',
                '**/scripts/*',
                '**/testing/*',
                '**/codec/*',
              ],
              allowTypeImports: true,
              message: 'Workflow code may import only types from the Node side.',
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'No process in workflow code.' },
        { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' },
        { name: 'setInterval', message: 'Use sleep() from @temporalio/workflow.' },
        { name: 'fetch', message: 'No I/O in workflow code: use an activity.' },
      ],
    },
  },
);
