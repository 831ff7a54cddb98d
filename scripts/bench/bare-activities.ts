// The bare chain's activities: a "model" that only waits the model latency, and a "tool" that echoes its input.

export interface BareActivities {
  echoModel(input: { latencyMs: number; step: number }): Promise<{ text: string }>;
  echoTool(input: { step: number; text: string }): Promise<{ text: string }>;
}

export const bareActivities: BareActivities = {
  async echoModel({ latencyMs, step }) {
    if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs));
    return { text: `reply ${step}` };
  },
  async echoTool({ text }) {
    return { text };
  },
};
