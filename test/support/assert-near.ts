// Costs are sums of floats: a test compares them with the figure it worked out to the last few bits, not exactly.
import assert from 'node:assert/strict';

/** `actual` is a number within `within` of `expected` (default 1e-9: the end of a dollar figure's bits). */
export function assertNear(actual: number | null | undefined, expected: number, within = 1e-9): void {
  assert.ok(typeof actual === 'number' && Math.abs(actual - expected) < within, `${actual} ≠ ${expected}`);
}
