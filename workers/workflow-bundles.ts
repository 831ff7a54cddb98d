// The workflow code a worker runs. The package ships it pre-bundled (`npm run build` writes dist/workflow-bundles/),
// so a worker from an installed package starts without running webpack; from a checkout run through tsx there is no
// such folder next to the code, and the worker bundles workflows/ (resolved from node_modules when installed) at start.
//
// Two bundles, because a failure converter is bundled into the workflow code: `default` (the SDK's), and
// `encoded-failures` (codec/failure-converter.ts, what encryptingDataConverter names). A worker whose data converter
// names another failure or payload converter bundles at start.
import fs from 'node:fs';
import path from 'node:path';
import type { DataConverter } from '@temporalio/common';
import { FAILURE_CONVERTER_PATH } from '../codec/data-converter';

/** The workflow code to bundle: the conversation workflow, resolved here so it works from source and from dist. */
export const WORKFLOWS_PATH = require.resolve('../workflows');

/** Where `npm run build` writes the pre-built bundles: dist/workflow-bundles/, beside dist/workers/. */
export const PREBUILT_BUNDLES_DIR = path.join(__dirname, '..', 'workflow-bundles');

export const PREBUILT_BUNDLES = {
  default: { file: 'default.js', failureConverterPath: undefined },
  'encoded-failures': { file: 'encoded-failures.js', failureConverterPath: FAILURE_CONVERTER_PATH },
} as const;

/**
 * The shipped bundle that matches `dataConverter` (its failure converter), if the package was built with one;
 * undefined when the worker has to bundle at start.
 */
export function prebuiltWorkflowBundle(
  dataConverter?: Pick<DataConverter, 'failureConverterPath' | 'payloadConverterPath'>,
  dir = PREBUILT_BUNDLES_DIR,
): string | undefined {
  if (dataConverter?.payloadConverterPath) return undefined;
  const wanted = dataConverter?.failureConverterPath;
  const variant = Object.values(PREBUILT_BUNDLES).find((bundle) => bundle.failureConverterPath === wanted);
  if (!variant) return undefined;
  const file = path.join(dir, variant.file);
  return fs.existsSync(file) ? file : undefined;
}
