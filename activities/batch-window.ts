// Shared Message Batches within one worker process: model calls in batch mode that arrive within a window go out in one
// `batches.create`, so a thousand conversations at the same step make a few submissions, not a thousand. A call waits
// at most its own window (a group leaves at the earliest deadline of its members), a group of MAX_GROUP_REQUESTS leaves
// at once, and calls with different beta headers never share a batch (the batch carries them, not its requests).
//
// The window also remembers, for this process's lifetime, which batch each custom_id went into and who else is in it:
// a retry of a submission in the same process finds its batch here, and a cancelled call cancels its batch only when
// every member this process submitted has been abandoned too.

/** One call's request for a batch: its custom_id and its params (no `stream`, no `betas`). */
export interface BatchEntry {
  customId: string;
  params: Record<string, unknown>;
}

/** Sends one batch; resolves with its id. */
export type CreateBatch = (requests: BatchEntry[], betas: string[]) => Promise<string>;

/** More requests than this in one group: it leaves at once (the API takes 100,000 or 256 MB per batch). */
export const MAX_GROUP_REQUESTS = 5_000;
/** What the process remembers, at most: the oldest custom_ids and batches are forgotten first. */
const MAX_REMEMBERED_CALLS = 200_000;
const MAX_REMEMBERED_BATCHES = 20_000;

interface Group {
  betas: string[];
  entries: BatchEntry[];
  deadline: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  sent: Promise<string>;
  send: () => void;
}

export class BatchWindow {
  private readonly open = new Map<string, Group>();
  /** custom_id → its batch (or its group's pending submission). */
  private readonly batchOf = new Map<string, Promise<string>>();
  /** batch id → every custom_id this process put in it, and those whose callers gave up waiting. */
  private readonly members = new Map<string, { all: Set<string>; abandoned: Set<string> }>();
  /** Submissions made, for the worker's metrics and the tests. */
  submissions = 0;

  constructor(
    private readonly create: CreateBatch,
    readonly defaultWindowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The batch this call goes into: the one it is already in (a retry in this process), or the next that leaves within
   * `windowMs`. Rejects when the batch's submission failed (every member of the group then tries again).
   */
  submit(entry: BatchEntry, betas: string[], windowMs = this.defaultWindowMs): Promise<string> {
    const known = this.batchOf.get(entry.customId);
    if (known) return known;
    const key = betas.join(',');
    let group = this.open.get(key);
    if (!group) {
      group = this.openGroup(key, betas);
      this.open.set(key, group);
    }
    group.entries.push(entry);
    const sent = group.sent;
    this.batchOf.set(entry.customId, sent);
    if (this.batchOf.size > MAX_REMEMBERED_CALLS) this.batchOf.delete(this.batchOf.keys().next().value!);
    // A failed submission is forgotten, so that the retry submits again.
    sent.catch(() => {
      if (this.batchOf.get(entry.customId) === sent) this.batchOf.delete(entry.customId);
    });
    const deadline = this.now() + Math.max(0, windowMs);
    if (group.entries.length >= MAX_GROUP_REQUESTS) group.send();
    else if (deadline < group.deadline || group.timer === undefined) this.schedule(group, deadline);
    return sent;
  }

  /** The batch a custom_id went into in this process, if it did. */
  known(customId: string): Promise<string> | undefined {
    return this.batchOf.get(customId);
  }

  /**
   * The call's caller stopped waiting (its conversation was cancelled). True when every member this process put in
   * the batch has been abandoned: the caller may cancel the batch. False when another member still waits, or when this
   * process never submitted the batch (it cannot know who else is in it).
   */
  abandon(batchId: string, customId: string): boolean {
    const members = this.members.get(batchId);
    if (!members?.all.has(customId)) return false;
    members.abandoned.add(customId);
    return members.abandoned.size === members.all.size;
  }

  private openGroup(key: string, betas: string[]): Group {
    let send!: () => void;
    const group: Group = {
      betas,
      entries: [],
      deadline: Number.POSITIVE_INFINITY,
      timer: undefined,
      sent: null!,
      send,
    };
    group.sent = new Promise<string>((resolve, reject) => {
      send = () => {
        if (this.open.get(key) !== group) return;
        this.open.delete(key);
        if (group.timer !== undefined) clearTimeout(group.timer);
        this.submissions++;
        this.create(group.entries, group.betas).then((id) => {
          this.members.set(id, { all: new Set(group.entries.map((e) => e.customId)), abandoned: new Set() });
          if (this.members.size > MAX_REMEMBERED_BATCHES) this.members.delete(this.members.keys().next().value!);
          resolve(id);
        }, reject);
      };
    });
    group.send = send;
    // Nobody may be listening yet when it fails (the first member's await comes after submit returns).
    group.sent.catch(() => undefined);
    return group;
  }

  private schedule(group: Group, deadline: number): void {
    if (group.timer !== undefined) clearTimeout(group.timer);
    group.deadline = deadline;
    group.timer = setTimeout(group.send, Math.max(0, deadline - this.now()));
  }
}
