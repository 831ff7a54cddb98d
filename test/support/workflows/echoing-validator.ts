// The smallest workflow that stops a worker with the SDK's default failure converter: an update validator whose
// rejection quotes its argument. Sent a lone surrogate, the rejection's message cannot be encoded for the worker's
// core (DecodeError … InvalidString), and the worker stops polling for every workflow on its task queue.
import { condition, defineUpdate, setHandler } from '@temporalio/workflow';

export const echo = defineUpdate<void, [string]>('echo');

export async function echoingValidator(): Promise<void> {
  setHandler(echo, () => undefined, {
    validator: (text: string) => {
      throw new Error(`refused: ${text}`);
    },
  });
  await condition(() => false);
}
