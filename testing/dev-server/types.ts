// The shapes of a Temporal dev server as this kit starts (or reuses) it.
import type { ChildProcess } from 'node:child_process';
import type { SearchAttributeKey, SearchAttributeType } from '@temporalio/common/lib/search-attributes';

/**
 * How startDevServer (and connectOrStartDevServer, when it starts one) runs `temporal server start-dev`.
 * @example
 * const server = await startDevServer({ port: 7233, uiPort: 8233, dbFile: 'temporal.db' });
 */
export interface DevServerOptions {
  /**
   * SQLite file. A file you pass is never deleted.
   * @default a fresh temp file, deleted by stop()
   */
  dbFile?: string;
  /**
   * gRPC frontend port.
   * @default a free port
   * @example 7233
   */
  port?: number;
  /**
   * Web UI port.
   * @default a free port
   * @example 8233
   */
  uiPort?: number;
  /**
   * Namespace to create and wait for (besides "default", which always exists).
   * @default 'default'
   */
  namespace?: string;
  /** Remote codec endpoint for the Web UI (`--ui-codec-endpoint`). */
  codecEndpoint?: string;
  /**
   * More of the server's dynamic configuration (`--dynamic-config-value KEY=JSON`), e.g.
   * `{ 'limit.historyCount.suggestContinueAsNew': 200 }` to see continue-as-new without writing 4,096 events.
   */
  dynamicConfig?: Record<string, string | number | boolean>;
  /** Progress messages of ours (starting, ready, stopping). */
  log?: (line: string) => void;
  /**
   * The server's own stdout/stderr lines.
   * @default dropped (the last lines still go into startup errors)
   */
  serverOutput?: (line: string) => void;
  /**
   * Search attributes to register.
   * @default the conversation's own (registeredSearchAttributes, common/search-attributes.ts)
   */
  searchAttributes?: readonly SearchAttributeKeyAny[];
  /**
   * The Temporal CLI to run.
   * @default the one ensureTemporalCli() finds or builds
   */
  cliPath?: string;
  /**
   * How long to wait for the server to answer, per start, in ms.
   * @default 90_000
   */
  startTimeoutMs?: number;
  /**
   * How long stop() waits after SIGTERM before SIGKILL, in ms.
   * @default 10_000
   */
  stopTimeoutMs?: number;
}

export interface DevServer {
  /** host:port of the gRPC frontend, for Connection.connect({ address }). */
  address: string;
  uiUrl: string;
  namespace: string;
  /** The SQLite file ('' for a reused server we know nothing about). */
  dbFile: string;
  /** The running server process (undefined for a reused server, or while stopped). */
  process?: ChildProcess;
  /** SIGTERM, wait, then SIGKILL. Idempotent. Removes the SQLite file if startDevServer created it. */
  stop(): Promise<void>;
  /** SIGKILL, as in a crash; keeps the SQLite file for restart(). */
  kill(): Promise<void>;
  /** Start again on the same SQLite file and ports (stopping it first if it is running); waits until ready. */
  restart(): Promise<void>;
}

export type SearchAttributeKeyAny = SearchAttributeKey<SearchAttributeType>;
