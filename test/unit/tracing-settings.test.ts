// Tracing is off unless the standard OTEL_* variables ask for it, and content on spans needs its own opt-in.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tracingSettings } from '../../tracing/tracing-settings';
import { prebuiltWorkflowBundle } from '../../workers/workflow-bundles';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAILURE_CONVERTER_PATH } from '../../codec/data-converter';

test('off by default: no OTEL_* variable, no tracing and no content', () => {
  assert.deepEqual(tracingSettings({}), { enabled: false, captureContent: false });
});

test('an OTLP endpoint or a named exporter turns tracing on', () => {
  assert.equal(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }).enabled, true);
  assert.equal(tracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://x:4318/v1/traces' }).enabled, true);
  assert.equal(tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp' }).enabled, true);
  assert.equal(tracingSettings({ OTEL_TRACES_EXPORTER: 'console' }).enabled, true);
});

test('OTEL_TRACES_EXPORTER=none and OTEL_SDK_DISABLED=true win over an endpoint', () => {
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
  assert.equal(tracingSettings({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).enabled, false);
  assert.equal(tracingSettings({ ...endpoint, OTEL_SDK_DISABLED: 'true' }).enabled, false);
  assert.equal(tracingSettings({ ...endpoint, OTEL_TRACES_EXPORTER: '' }).enabled, true);
});

test('content on spans only with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true', () => {
  const on = { OTEL_TRACES_EXPORTER: 'otlp' };
  assert.equal(tracingSettings(on).captureContent, false);
  assert.equal(
    tracingSettings({ ...on, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'false' }).captureContent,
    false,
  );
  assert.equal(
    tracingSettings({ ...on, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' }).captureContent,
    true,
  );
});

test('a traced worker picks the traced twin of the shipped bundle, an untraced one the plain bundle', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bundles-'));
  for (const file of ['default.js', 'default-traced.js', 'encoded-failures.js', 'encoded-failures-traced.js'])
    writeFileSync(join(dir, file), '');
  const encrypted = { failureConverterPath: FAILURE_CONVERTER_PATH };
  assert.equal(prebuiltWorkflowBundle(undefined, dir), join(dir, 'default.js'));
  assert.equal(prebuiltWorkflowBundle(undefined, dir, true), join(dir, 'default-traced.js'));
  assert.equal(prebuiltWorkflowBundle(encrypted, dir), join(dir, 'encoded-failures.js'));
  assert.equal(prebuiltWorkflowBundle(encrypted, dir, true), join(dir, 'encoded-failures-traced.js'));
});
