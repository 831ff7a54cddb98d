// The one place every span passes on its way to the exporters — the process's own (activities, client calls) and
// the workflow sandbox's (handed out through the SDK's sink) — where content is taken off when it is not to be kept:
// exception messages and stack headers (Temporal's interceptors record them: `no ticker for "…"`), status messages,
// and content attributes. See content-free.ts for what remains.
import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor, TimedEvent } from '@opentelemetry/sdk-trace-base';
import { type Attributes, contentFreeSpan } from './content-free';

/**
 * `next` with content taken off each ended span unless `keepContent()` (content capture on, payloads not
 * encrypted). The span is changed in place: every processor after this one sees it without content.
 */
export function contentFreeSpanProcessor(next: SpanProcessor, keepContent: () => boolean): SpanProcessor {
  return {
    onStart: (span: Span, context: Context) => next.onStart(span, context),
    onEnd(span: ReadableSpan) {
      if (!keepContent()) {
        const mutable = span as { -readonly [K in keyof ReadableSpan]: ReadableSpan[K] };
        const clean = contentFreeSpan({
          attributes: span.attributes as Attributes,
          events: span.events as { name: string; attributes?: Attributes }[],
          status: span.status,
        });
        // Attributes in place (an SDK span's attributes object is its own); events and status replaced.
        for (const key of Object.keys(span.attributes)) if (!(key in clean.attributes)) delete mutable.attributes[key];
        mutable.events = span.events.map((event, i) => ({
          ...event,
          attributes: clean.events[i]!.attributes as TimedEvent['attributes'],
        }));
        mutable.status = clean.status;
      }
      next.onEnd(span);
    },
    forceFlush: () => next.forceFlush(),
    shutdown: () => next.shutdown(),
  };
}
