// The demo model's answer to one request: the protocol's turn, then the request's limits.
import { applyLimits } from './apply-limits';
import { isLegacy, legacyTurn } from './legacy-turn';
import { nativeTurn } from './native-turn';
import { isObject } from './read-request';
import type { DemoReply } from './types';

/** The demo model's reply to a (valid) Messages API request body. */
export function demoReply(body: unknown): DemoReply {
  const request = isObject(body) ? body : {};
  const blocks = isLegacy(request) ? legacyTurn(request) : nativeTurn(request);
  return applyLimits(blocks, request);
}
