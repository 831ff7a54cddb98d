// The Anthropic client a worker's model activity uses: the real SDK, pointed at Claude or at a local Messages API.
import Anthropic from '@anthropic-ai/sdk';
import { LOCAL_API_KEY, type WorkerConfig } from './config';

export function createAnthropic(config: Pick<WorkerConfig, 'ANTHROPIC_API_KEY' | 'ANTHROPIC_BASE_URL'>): Anthropic {
  return new Anthropic({
    apiKey: config.ANTHROPIC_API_KEY ?? LOCAL_API_KEY,
    ...(config.ANTHROPIC_BASE_URL && { baseURL: config.ANTHROPIC_BASE_URL }),
    maxRetries: 0, // Temporal retries, with our classifier's verdict
    timeout: 15 * 60_000, // the activity's own timeouts are the ones that matter
    // The model call's span is the worker's own `chat {model}` (tracing/): the SDK's spans would count the same tokens
    // twice and bring a content switch of their own (ANTHROPIC_OPEN_TELEMETRY_*) that payload encryption cannot veto.
    openTelemetry: { traces: false },
  });
}
