// Reading what a caller sent: the request target as a URL, path segments percent-decoded, values and JSON bodies
// checked by a zod schema. Whatever is wrong is a 400 (413, 415) whose message quotes at most a little of what was sent.
import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';
import { describeIssues } from '../common/options';
import { HttpError } from './http-answers';

/** The request's path and query; a request target that is not one (`*`, an unparsable URL) is 400. */
export function requestUrl(req: IncomingMessage): URL {
  const target = req.url ?? '/';
  try {
    if (target.startsWith('/')) return new URL(`http://gateway${target}`);
  } catch {
    // below
  }
  throw new HttpError(400, 'invalid_request', 'The request target is not a path.');
}

/** One path segment, percent-decoded; malformed percent-encoding (or encoded bytes that are not UTF-8) is 400. */
export function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, 'invalid_request', 'The path is not valid percent-encoded UTF-8.');
  }
}

/** `value` parsed by `schema`, or a 400 naming `what` and its problems. */
export function parse<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new HttpError(400, 'invalid_request', `Invalid ${what}: ${describeIssues(parsed.error, what)}`);
  return parsed.data;
}

/** The body as JSON checked by `schema`, at most `maxBodyBytes`; 415, 413 and 400 say what is wrong with it. */
export async function readBody<S extends z.ZodType>(
  req: IncomingMessage,
  schema: S,
  maxBodyBytes: number,
): Promise<z.output<S>> {
  const type = req.headers['content-type'] ?? '';
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    throw new HttpError(415, 'unsupported_media_type', 'Send the body as JSON (Content-Type: application/json).');
  }
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > maxBodyBytes) throw tooLarge(maxBodyBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBodyBytes) throw tooLarge(maxBodyBytes);
    chunks.push(chunk);
  }
  let json: unknown;
  try {
    json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (err) {
    // V8's message quotes the body; only where it fails is said.
    const at = /at position (\d+)/.exec((err as Error).message)?.[1];
    throw new HttpError(400, 'invalid_json', `The body is not valid JSON${at ? ` (at character ${at})` : ''}.`);
  }
  return parse(schema, json, 'body');
}

function tooLarge(maxBodyBytes: number): HttpError {
  // The rest of the body is not read: the connection cannot carry another request.
  return new HttpError(413, 'body_too_large', `The body is larger than ${maxBodyBytes} bytes.`, {
    connection: 'close',
  });
}
