// The workflow code a worker runs. The package ships it pre-bundled (`npm run build` writes dist/workflow-bundles/),
// so a worker from an installed package starts without running webpack; from a checkout run through tsx there is no
// such folder next to the code, and the worker bundles workflows/ (resolved from node_modules when installed) at start.
//
// Two bundles, because a failure converter is bundled into the workflow code: `default` (the SDK's), and
// `encoded-failures` (codec/failure-converter.ts, what encryptingDataConverter names). A worker whose data converter
// names another failure or payload converter bundles at start. Each has a `-traced` twin that also holds Temporal's
// OpenTelemetry workflow interceptors (tracing/): a worker without tracing runs a bundle without them.
import fs from 'node:fs';
import path from 'node:path';
import type { DataConverter } from '@temporalio/common';
import { FAILURE_CONVERTER_PATH } from '../codec/data-converter';

/** The workflow code to bundle: the conversation workflow, resolved here so it works from source and from dist. */
export const WORKFLOWS_PATH = require.resolve('../workflows');

/** Where `npm run build` writes the pre-built bundles: dist/workflow-bundles/, beside dist/workers/. */
export const PREBUILT_BUNDLES_DIR = path.join(__dirname, '..', 'workflow-bundles');

/** Temporal's OpenTelemetry workflow interceptors: the module a traced bundle includes (resolved, never loaded here). */
export const OTEL_WORKFLOW_INTERCEPTORS =
  require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');

export const PREBUILT_BUNDLES = {
  default: { file: 'default.js', failureConverterPath: undefined, traced: false },
  'encoded-failures': { file: 'encoded-failures.js', failureConverterPath: FAILURE_CONVERTER_PATH, traced: false },
  'default-traced': { file: 'default-traced.js', failureConverterPath: undefined, traced: true },
  'encoded-failures-traced': {
    file: 'encoded-failures-traced.js',
    failureConverterPath: FAILURE_CONVERTER_PATH,
    traced: true,
  },
} as const;

/**
 * The shipped bundle that matches `dataConverter` (its failure converter) and tracing, if the package was built with
 * one; undefined when the worker has to bundle at start.
 */
export function prebuiltWorkflowBundle(
  dataConverter?: Pick<DataConverter, 'failureConverterPath' | 'payloadConverterPath'>,
  dir = PREBUILT_BUNDLES_DIR,
  traced = false,
): string | undefined {
  if (dataConverter?.payloadConverterPath) return undefined;
  const wanted = dataConverter?.failureConverterPath;
  const variant = Object.values(PREBUILT_BUNDLES).find(
    (bundle) => bundle.failureConverterPath === wanted && bundle.traced === traced,
  );
  if (!variant) return undefined;
  const file = path.join(dir, variant.file);
  return fs.existsSync(file) ? file : undefined;
}
