// A Temporal Logger that passes every line on without content (content-free.ts): the SDK's own lines (`Activity
// failed` with the error, `Workflow failed`), Temporal core's when forwarded (`Failing workflow task` with the
// failure), and the orchestrator's (MCP servers). runWorker installs it as the Runtime's logger unless content is to
// be kept (content capture on, payloads not encrypted); a process that installs its own Runtime can wrap its logger.
import type { LogLevel, LogMetadata, Logger } from '@temporalio/common';
import { contentFreeLogMessage, contentFreeLogMeta } from './content-free';

export class ContentFreeLogger implements Logger {
  constructor(private readonly next: Logger) {}

  log(level: LogLevel, message: string, meta?: LogMetadata): void {
    this.next.log(level, contentFreeLogMessage(message), meta && contentFreeLogMeta(meta));
  }

  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }

  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }

  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }

  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }

  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }
}
