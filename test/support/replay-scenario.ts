// One conversation whose histories are kept in the replay corpus (test/fixtures/replay/<version>/): what it is called,
// how it runs, and the worker it needs when the default one (the demo tools, no MCP server) is not enough. A leaf, so
// the files of scenarios can share it without importing each other.
import type { Harness, HarnessOptions } from './harness';

export interface ReplayScenario {
  name: string;
  /**
   * A worker of its own for this scenario (MCP servers, agent tools, a small context window); default: the recorder's
   * shared one.
   */
  harness?: HarnessOptions;
  /**
   * Runs the conversation to its end; resolves with its workflow id, or with several (a parent first, then the
   * sub-agents it started): every run of each is recorded.
   */
  run(h: Harness): Promise<string | string[]>;
}
