// One connection per configured MCP server, shared by every call of the worker, through the official SDK client.
// A connection is opened on first use and opened again after it broke: a stdio server whose process died is started
// anew by the next call (the call in flight fails at once and Temporal retries it); a Streamable HTTP server that
// went away is noticed by a ping while a call waits (a dropped HTTP stream does not fail the call by itself), and
// the retry opens a new session.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type CallToolRequest,
  type CallToolResult,
  ErrorCode,
  McpError,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from './mcp-server-config';

/** The client's name and version in the MCP handshake. */
export const MCP_CLIENT_INFO = { name: 'claude-temporal-orchestrator', version: '0.1.0' };
/** How long a server may take to start and answer `initialize`. */
const CONNECT_TIMEOUT_MS = 60_000;
/** While an HTTP call waits, the server is pinged this often; an error other than a slow answer ends the call. */
const PING_INTERVAL_MS = 2_000;
const PING_TIMEOUT_MS = 10_000;
const STDERR_TAIL_LINES = 20;

/** Pages of `tools/list` the pool follows: a server whose `nextCursor` never ends is refused, not followed for ever. */
export const MAX_TOOL_LIST_PAGES = 100;

/** The server's tool list had more than MAX_TOOL_LIST_PAGES pages. */
export class McpToolListTooLongError extends Error {
  override name = 'McpToolListTooLongError';
}

/** The server could not be started or reached: worth another try later. */
export class McpConnectError extends Error {
  override name = 'McpConnectError';
}

/** The worker has no server of this name. */
export class McpUnknownServerError extends Error {
  override name = 'McpUnknownServerError';
}

export interface McpClientPoolOptions {
  /**
   * Where the pool says what it does (servers started, exited) and what stdio servers print on stderr. What a server
   * sent (errors, stderr) is in `meta`, never in the message, so a logger that keeps content out of logs can size it.
   */
  log?: (level: 'info' | 'warn' | 'debug', message: string, meta?: Record<string, unknown>) => void;
}

interface Connection {
  client: Client;
  transport: StdioClientTransport | StreamableHTTPClientTransport;
  closed: boolean;
}

export class McpClientPool {
  private readonly configs: ReadonlyMap<string, McpServerConfig>;
  private readonly connections = new Map<string, Promise<Connection>>();
  private readonly stderrTails = new Map<string, string[]>();
  private readonly log: NonNullable<McpClientPoolOptions['log']>;
  private closing = false;

  constructor(configs: readonly McpServerConfig[], options: McpClientPoolOptions = {}) {
    this.configs = new Map(configs.map((config) => [config.name, config]));
    if (this.configs.size !== configs.length) throw new Error('Two MCP servers share a name.');
    this.log = options.log ?? (() => undefined);
  }

  /** The names of the configured servers. */
  get serverNames(): string[] {
    return [...this.configs.keys()];
  }

  config(server: string): McpServerConfig | undefined {
    return this.configs.get(server);
  }

  /** The process id of a stdio server that is running now. */
  async pid(server: string): Promise<number | undefined> {
    const connection = await this.connections.get(server)?.catch(() => undefined);
    if (!connection || connection.closed || !(connection.transport instanceof StdioClientTransport)) return undefined;
    return connection.transport.pid ?? undefined;
  }

  /** What a stdio server printed last on stderr (kept for the worker's log; never sent to the model). */
  stderrTail(server: string): string[] {
    return [...(this.stderrTails.get(server) ?? [])];
  }

  /** Every tool the server has (all pages, at most MAX_TOOL_LIST_PAGES of them). */
  async listTools(server: string, signal?: AbortSignal): Promise<Tool[]> {
    const { client } = await this.connection(server, signal);
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages === 0 || cursor !== undefined; pages++) {
      if (pages === MAX_TOOL_LIST_PAGES) {
        throw new McpToolListTooLongError(
          `tools/list still had a next page after ${MAX_TOOL_LIST_PAGES} pages (${tools.length} tools); a server is expected to end its list.`,
        );
      }
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, signal ? { signal } : {});
      tools.push(...page.tools);
      cursor = page.nextCursor;
    }
    return tools;
  }

  /**
   * One `tools/call`. A result with `isError` is returned like any other; a call that could not be made throws (the
   * SDK's McpError, or McpConnectError), and a broken connection is dropped so the next call opens a new one.
   */
  async callTool(
    server: string,
    params: CallToolRequest['params'],
    options: Pick<RequestOptions, 'signal' | 'timeout' | 'onprogress'> = {},
  ): Promise<CallToolResult> {
    const connection = await this.connection(server, options.signal);
    const stopWatching =
      connection.transport instanceof StreamableHTTPClientTransport ? this.watch(server, connection) : undefined;
    try {
      const result = await connection.client.callTool(params, undefined, options);
      // The 2024-10-07 shape (`toolResult`) is read as a text result.
      if (!('content' in result)) return { content: [{ type: 'text', text: JSON.stringify(result.toolResult) }] };
      return result as CallToolResult;
    } catch (err) {
      if (!options.signal?.aborted && brokenConnection(err)) await this.drop(server, connection);
      throw err;
    } finally {
      stopWatching?.();
    }
  }

  /** Closes every connection: stdio servers are stopped, HTTP sessions ended. */
  async close(): Promise<void> {
    this.closing = true;
    const open = [...this.connections.entries()];
    this.connections.clear();
    await Promise.all(
      open.map(async ([server, pending]) => {
        const connection = await pending.catch(() => undefined);
        if (!connection || connection.closed) return;
        connection.closed = true;
        if (connection.transport instanceof StreamableHTTPClientTransport) {
          await connection.transport.terminateSession().catch(() => undefined);
        }
        await connection.client
          .close()
          .catch((error: unknown) => this.log('warn', `MCP ${server} did not close cleanly`, { error }));
      }),
    );
  }

  /** The open connection to `server`, or a new one (a dead stdio server is started again here). */
  private async connection(server: string, signal?: AbortSignal): Promise<Connection> {
    const config = this.configs.get(server);
    if (!config) {
      throw new McpUnknownServerError(
        `This worker has no MCP server "${server}"; it is configured with: ${this.serverNames.join(', ') || 'none'}.`,
      );
    }
    if (this.closing) throw new McpConnectError(`The worker is shutting down; MCP server "${server}" is closed.`);
    let pending = this.connections.get(server);
    const current = await pending?.catch(() => undefined);
    if (!pending || !current || current.closed) {
      if (pending) this.connections.delete(server);
      pending = this.open(config);
      this.connections.set(server, pending);
      // A failed start is forgotten, so the next call tries again.
      pending.catch(() => {
        if (this.connections.get(server) === pending) this.connections.delete(server);
      });
    }
    return signal ? abortable(pending, signal) : pending;
  }

  private async open(config: McpServerConfig): Promise<Connection> {
    const client = new Client(MCP_CLIENT_INFO, { capabilities: {} });
    const transport =
      config.type === 'http'
        ? new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers } })
        : new StdioClientTransport({
            command: config.command,
            args: config.args,
            env: config.env,
            stderr: 'pipe',
            ...(config.cwd && { cwd: config.cwd }),
          });
    if (transport instanceof StdioClientTransport) this.collectStderr(config.name, transport);
    const connection: Connection = { client, transport, closed: false };
    client.onclose = () => {
      if (connection.closed) return;
      connection.closed = true;
      this.log('warn', `MCP ${config.name} closed the connection; the next call opens a new one`);
    };
    // Transport errors (a dropped HTTP stream, a line that is not JSON-RPC) are logged; a call that fails says why.
    client.onerror = (error) => this.log('debug', `MCP ${config.name} transport error`, { error });
    try {
      await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
    } catch (err) {
      connection.closed = true;
      await client.close().catch(() => undefined);
      const tail = this.stderrTail(config.name);
      if (tail.length > 0) {
        this.log('warn', `MCP ${config.name} did not start; its last lines on stderr are attached`, {
          stderr: tail.join('\n'),
        });
      }
      const reason = err instanceof Error ? err.message : String(err);
      throw new McpConnectError(`Could not start or reach the MCP server "${config.name}": ${reason}`, { cause: err });
    }
    const version = client.getServerVersion();
    const where = transport instanceof StdioClientTransport ? `pid ${transport.pid}` : config.type;
    this.log('info', `MCP ${config.name} connected (${version?.name ?? '?'} ${version?.version ?? ''}, ${where})`);
    return connection;
  }

  private async drop(server: string, connection: Connection): Promise<void> {
    if (this.connections.get(server) && (await this.connections.get(server)!.catch(() => undefined)) === connection) {
      this.connections.delete(server);
    }
    if (connection.closed) return;
    connection.closed = true;
    await connection.client.close().catch(() => undefined);
  }

  /** Pings an HTTP server while a call waits: one that is gone (or lost the session) ends the call now. */
  private watch(server: string, connection: Connection): () => void {
    let pinging = false;
    const timer = setInterval(() => {
      if (pinging || connection.closed) return;
      pinging = true;
      connection.client
        .ping({ timeout: PING_TIMEOUT_MS })
        .catch(async (err: unknown) => {
          // A slow answer is a busy server, not a gone one.
          if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) return;
          this.log('warn', `MCP ${server} did not answer a ping; dropping the connection`, { error: err });
          await this.drop(server, connection);
        })
        .finally(() => (pinging = false));
    }, PING_INTERVAL_MS);
    return () => clearInterval(timer);
  }

  private collectStderr(server: string, transport: StdioClientTransport): void {
    const tail: string[] = [];
    this.stderrTails.set(server, tail);
    let partial = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        this.log('debug', `MCP ${server} wrote on stderr`, { line });
        tail.push(line);
        if (tail.length > STDERR_TAIL_LINES) tail.shift();
      }
    });
  }
}

/** Errors after which the connection cannot serve another call: the next one must open a new connection. */
function brokenConnection(err: unknown): boolean {
  if (err instanceof McpError) return err.code === ErrorCode.ConnectionClosed;
  // fetch failed, an HTTP status for a lost session, a write to a closed pipe, "Not connected".
  return !(err instanceof Error && err.name === 'AbortError');
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
