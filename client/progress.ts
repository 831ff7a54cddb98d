// Follows a conversation while it works: prints each new transcript message as it lands and says what is
// running (model call or tool) and for how long. Reads only queries, so it adds nothing to the history.
import type { ConversationSnapshot } from '../common/conversation-types';
import type { ConversationClient } from './conversation-client';
import { formatMessage, type FormattedLine } from './transcript-format';

export interface FollowOptions {
  onLine(line: FormattedLine): void;
  /** Called with e.g. `get_ticker_symbol(company_name="General Motors") · 1.2s`, or '' when nothing runs. */
  onRunning?(status: string): void;
  /** Called with each polled state (e.g. to ask a person about pending approvals); awaited. */
  onState?(state: ConversationSnapshot): Promise<void>;
  /**
   * How often the conversation is polled, in milliseconds.
   * @default 250
   * @example 1_000
   */
  intervalMs?: number;
  /**
   * Messages already shown: the transcript is printed from this index on.
   * @default 0
   * @example 4
   */
  from?: number;
}

/** Polls until `until` settles; returns how many messages it has shown. */
export async function followConversation(
  client: ConversationClient,
  id: string,
  until: Promise<unknown>,
  options: FollowOptions,
): Promise<number> {
  let seen = options.from ?? 0;
  let done = false;
  until.then(
    () => (done = true),
    () => (done = true),
  );
  const poll = async () => {
    const messages = await client.getTranscript(id, { from: seen }).catch(() => []);
    for (const message of messages) for (const line of formatMessage(message)) options.onLine(line);
    seen += messages.length;
    if (options.onRunning || options.onState) {
      const state = await client.getState(id).catch(() => undefined);
      const now = Date.now();
      options.onRunning?.(
        (state?.running ?? [])
          .map((r) => `${r.name} · ${((now - Date.parse(r.startedAt)) / 1000).toFixed(1)}s`)
          .join(', '),
      );
      if (state && options.onState) await options.onState(state);
    }
  };
  while (!done) {
    await poll();
    await Promise.race([
      until.catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 250)),
    ]);
  }
  await poll();
  options.onRunning?.('');
  return seen;
}
