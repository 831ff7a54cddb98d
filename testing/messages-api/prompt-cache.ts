// Prompt caching, accounted the way the API documents it
// (https://platform.claude.com/docs/en/build-with-claude/prompt-caching):
//
// - The prompt is a sequence of blocks in the order tools → system → messages (each tool, each system text block,
//   each content block of each message). A block carrying `cache_control: {type: 'ephemeral'}` is a breakpoint;
//   a top-level `cache_control` puts one on the last block.
// - A cache entry is keyed by the exact prefix up to and including a breakpoint block, for one model.
// - On a request, for every breakpoint the cache looks back up to 20 blocks (the breakpoint included) for the longest
//   prefix written earlier and still alive; the longest hit over all breakpoints is read (`cache_read_input_tokens`),
//   and its TTL is refreshed.
// - Everything from the hit up to the last breakpoint is written (`cache_creation_input_tokens`), one entry per
//   breakpoint past the hit, unless the prefix is shorter than the minimum cacheable length, which is simply not
//   cached (no error). The rest after the last breakpoint is `input_tokens`.
// - Entries live 5 minutes (`ttl: '1h'`: one hour) after they were last written or read.
//
// The key of a prefix is a chained sha256 over its blocks, so the work per request is linear in its size, and it is
// done only for requests that carry a breakpoint.
import { createHash } from 'node:crypto';
import { estimateTokens } from './tokens';

/** Prefixes shorter than this are not cached (the API's minimum for most models). */
export const MIN_CACHEABLE_TOKENS = 1024;
/** How many blocks before a breakpoint (the breakpoint included) are checked for an earlier entry. */
export const LOOKBACK_BLOCKS = 20;
const TTL_MS = { '5m': 5 * 60_000, '1h': 60 * 60_000 } as const;
type Ttl = keyof typeof TTL_MS;

export interface CacheUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

interface PromptBlock {
  /** What distinguishes this block in the prefix key (role and serialized content, without `cache_control`). */
  key: string;
  tokens: number;
  breakpoint: Ttl | null;
}

interface Entry {
  expiresAt: number;
  ttlMs: number;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function breakpointOf(block: unknown): Ttl | null {
  if (!isObject(block) || !isObject(block['cache_control'])) return null;
  return block['cache_control']['ttl'] === '1h' ? '1h' : '5m';
}

/** JSON of a block without its `cache_control` (moving a breakpoint does not change the content). */
function serializeWithoutCacheControl(block: Json): string {
  if (!('cache_control' in block)) return JSON.stringify(block);
  const { cache_control: _ignored, ...rest } = block;
  return JSON.stringify(rest);
}

function contentText(block: unknown): string {
  if (typeof block === 'string') return block;
  if (isObject(block) && block['type'] === 'text' && typeof block['text'] === 'string') return block['text'];
  // A compaction block counts as its summary (its signature and opaque metadata are not read by the model).
  if (isObject(block) && block['type'] === 'compaction')
    return typeof block['content'] === 'string' ? block['content'] : '';
  return isObject(block) ? serializeWithoutCacheControl(block) : JSON.stringify(block);
}

/** The request's prompt as blocks, in cache order (tools → system → messages). */
export function promptBlocks(body: Json): PromptBlock[] {
  const blocks: PromptBlock[] = [];
  const push = (kind: string, block: unknown): void => {
    const text = contentText(block);
    blocks.push({ key: `${kind}\u0000${text}`, tokens: estimateTokens(text), breakpoint: breakpointOf(block) });
  };
  if (Array.isArray(body['tools'])) for (const tool of body['tools']) push('tool', tool);
  const system = body['system'];
  if (typeof system === 'string') {
    if (system.length > 0) push('system', system);
  } else if (Array.isArray(system)) {
    for (const block of system) push('system', block);
  }
  if (Array.isArray(body['messages'])) {
    for (const message of body['messages']) {
      if (!isObject(message)) continue;
      const role = String(message['role']);
      const content = message['content'];
      if (typeof content === 'string') push(role, content);
      else if (Array.isArray(content)) for (const block of content) push(role, block);
    }
  }
  // Top-level `cache_control`: automatic caching marks the last block of the prompt.
  const last = blocks[blocks.length - 1];
  if (last && isObject(body['cache_control']) && last.breakpoint === null) {
    last.breakpoint = body['cache_control']['ttl'] === '1h' ? '1h' : '5m';
  }
  return blocks;
}

/** The total input tokens of a request, cached or not (also the answer of `/v1/messages/count_tokens`). */
export function countInputTokens(body: Json): number {
  let total = 0;
  for (const block of promptBlocks(body)) total += block.tokens;
  return Math.max(1, total);
}

export class PromptCache {
  private readonly entries = new Map<string, Entry>();
  private writesSinceSweep = 0;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly minCacheableTokens = MIN_CACHEABLE_TOKENS,
  ) {}

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  /** Accounts the request's input tokens, reading and writing cache entries as the API would. */
  account(body: Json): CacheUsage {
    const blocks = promptBlocks(body);
    const cumulative: number[] = [];
    let total = 0;
    const breakpoints: number[] = [];
    blocks.forEach((block, i) => {
      total += block.tokens;
      cumulative.push(total);
      if (block.breakpoint) breakpoints.push(i);
    });
    total = Math.max(1, total);
    const usage: CacheUsage = {
      input_tokens: total,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    };
    if (breakpoints.length === 0) return usage;

    // Chained prefix keys, only as far as the last breakpoint.
    const lastBreakpoint = breakpoints[breakpoints.length - 1] ?? 0;
    const keys: string[] = [];
    let chain = createHash('sha256')
      .update(`model\u0000${String(body['model'])}`)
      .digest('hex');
    for (let i = 0; i <= lastBreakpoint; i++) {
      chain = createHash('sha256')
        .update(chain)
        .update('\u0001')
        .update(blocks[i]?.key ?? '')
        .digest('hex');
      keys.push(chain);
    }

    const now = this.now();
    const alive = (i: number): Entry | undefined => {
      const entry = this.entries.get(keys[i] ?? '');
      if (entry && entry.expiresAt <= now) {
        this.entries.delete(keys[i] ?? '');
        return undefined;
      }
      return entry;
    };

    // The longest earlier prefix found looking back from any breakpoint.
    let hit = -1;
    for (const bp of breakpoints) {
      for (let i = bp; i >= 0 && i > bp - LOOKBACK_BLOCKS; i--) {
        if (i <= hit) break;
        if (alive(i)) {
          hit = i;
          break;
        }
      }
    }
    const readTokens = hit >= 0 ? (cumulative[hit] ?? 0) : 0;
    if (hit >= 0) {
      const entry = this.entries.get(keys[hit] ?? '');
      if (entry) entry.expiresAt = now + entry.ttlMs;
    }

    // Write every breakpoint past the hit whose prefix is long enough; the segment up to it is billed at its TTL.
    let written = hit;
    for (const bp of breakpoints) {
      if (bp <= hit) continue;
      const prefixTokens = cumulative[bp] ?? 0;
      if (prefixTokens < this.minCacheableTokens) continue;
      const ttl = blocks[bp]?.breakpoint ?? '5m';
      const segment = prefixTokens - (written >= 0 ? (cumulative[written] ?? 0) : 0);
      if (ttl === '1h') usage.cache_creation.ephemeral_1h_input_tokens += segment;
      else usage.cache_creation.ephemeral_5m_input_tokens += segment;
      this.entries.set(keys[bp] ?? '', { expiresAt: now + TTL_MS[ttl], ttlMs: TTL_MS[ttl] });
      written = bp;
      this.writesSinceSweep++;
    }
    const createdTokens =
      usage.cache_creation.ephemeral_1h_input_tokens + usage.cache_creation.ephemeral_5m_input_tokens;
    usage.cache_read_input_tokens = readTokens;
    usage.cache_creation_input_tokens = createdTokens;
    usage.input_tokens = Math.max(0, total - readTokens - createdTokens);
    if (this.writesSinceSweep > 10_000) this.sweep(now);
    return usage;
  }

  private sweep(now: number): void {
    this.writesSinceSweep = 0;
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
  }
}
