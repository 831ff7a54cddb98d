// The workflow code a worker runs. The package ships it pre-bundled (`npm run build` writes dist/workflow-bundles/),
// so a worker from an installed package starts without running webpack; from a checkout run through tsx there is no
// such folder next to the code, and the worker bundles workflows/ (resolved from node_modules when installed) at start.
//
// The payload and failure converters are bundled into the workflow code; every bundle has the worker's lenient payload
// converter (worker-data-converter.ts). Two failure converters, two bundles: `default` (messages bounded,
// common/converters/failure-converter.ts) and `encoded-failures` (bounded, then encrypted: codec/failure-converter.ts,
// what encryptingDataConverter names). A worker whose data converter names another failure or payload converter
// bundles at start. Each has a `-traced` twin that also holds Temporal's OpenTelemetry workflow interceptors
// (tracing/): a worker without tracing runs a bundle without them.
import fs from 'node:fs';
import path from 'node:path';
import type { DataConverter } from '@temporalio/common';
import { FAILURE_CONVERTER_PATH } from '../codec/data-converter';
import { OTEL_WORKFLOW_INTERCEPTORS } from '../tracing/workflow-interceptors';
import { PAYLOAD_CONVERTER_PATH, PLAIN_FAILURE_CONVERTER_PATH } from './worker-data-converter';

/** The workflow code to bundle: the conversation workflow, resolved here so it works from source and from dist. */
export const WORKFLOWS_PATH = require.resolve('../workflows');

/** Where `npm run build` writes the pre-built bundles: dist/workflow-bundles/, beside dist/workers/. */
export const PREBUILT_BUNDLES_DIR = path.join(__dirname, '..', 'workflow-bundles');

export const PREBUILT_BUNDLES = {
  default: { file: 'default.js', failureConverterPath: PLAIN_FAILURE_CONVERTER_PATH, traced: false },
  'encoded-failures': { file: 'encoded-failures.js', failureConverterPath: FAILURE_CONVERTER_PATH, traced: false },
  'default-traced': { file: 'default-traced.js', failureConverterPath: PLAIN_FAILURE_CONVERTER_PATH, traced: true },
  'encoded-failures-traced': {
    file: 'encoded-failures-traced.js',
    failureConverterPath: FAILURE_CONVERTER_PATH,
    traced: true,
  },
} as const;

/**
 * Modules bundled into the workflow code once per worker and shared by every workflow run on it, instead of evaluated
 * again for each run: the libraries the workflow uses (workflows/shared-libraries.ts: zod, re2js), which hold no
 * state of a conversation. Evaluating zod again for every conversation was most of the CPU a conversation's start
 * cost. (Our own schema modules stay per run: the SDK deep-freezes shared modules' exports, and zod schemas fill in
 * members on first use.)
 */
export const SHARED_WORKFLOW_MODULES = [require.resolve('../workflows/shared-libraries')];

export type BundleVariant = (typeof PREBUILT_BUNDLES)[keyof typeof PREBUILT_BUNDLES];

/**
 * `bundleWorkflowCode`'s options for the conversation workflow as a worker with this variant's converters runs it:
 * what `npm run build`, the test runner, the bench and the soak bundle.
 */
export function conversationBundleOptions(variant: BundleVariant = PREBUILT_BUNDLES.default) {
  return {
    workflowsPath: WORKFLOWS_PATH,
    payloadConverterPath: PAYLOAD_CONVERTER_PATH,
    failureConverterPath: variant.failureConverterPath,
    preloadModules: SHARED_WORKFLOW_MODULES,
    ...(variant.traced && { workflowInterceptorModules: [OTEL_WORKFLOW_INTERCEPTORS] }),
  };
}

/**
 * The shipped bundle that matches the worker's data converter (workerDataConverter's: its failure and payload
 * converters) and tracing, if the package was built with one; undefined when the worker has to bundle at start.
 */
export function prebuiltWorkflowBundle(
  dataConverter?: Pick<DataConverter, 'failureConverterPath' | 'payloadConverterPath'>,
  dir = PREBUILT_BUNDLES_DIR,
  traced = false,
): string | undefined {
  const variant = bundleVariantFor(dataConverter, traced);
  if (!variant) return undefined;
  const file = path.join(dir, variant.file);
  return fs.existsSync(file) ? file : undefined;
}

/** The bundle variant whose converters are the data converter's (workerDataConverter's), or undefined if none is. */
export function bundleVariantFor(
  dataConverter?: Pick<DataConverter, 'failureConverterPath' | 'payloadConverterPath'>,
  traced = false,
): BundleVariant | undefined {
  if ((dataConverter?.payloadConverterPath ?? PAYLOAD_CONVERTER_PATH) !== PAYLOAD_CONVERTER_PATH) return undefined;
  const wanted = dataConverter?.failureConverterPath ?? PLAIN_FAILURE_CONVERTER_PATH;
  return Object.values(PREBUILT_BUNDLES).find(
    (bundle) => bundle.failureConverterPath === wanted && bundle.traced === traced,
  );
}
