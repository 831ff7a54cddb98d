// The workflow bundle's entry point: what the worker registers. Workflow-safe code only.
export { conversation } from './conversation';
export { toolCatalog } from './tool-catalog';
export { rateLimiter } from './rate-limiter';
