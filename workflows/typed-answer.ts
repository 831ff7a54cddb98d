// The end of a turn that asked for a typed answer (common/structured-output.ts). The loop hands each reply here
// before its usual reading: a reply that is (or should have been) the answer is checked; a wrong one goes back to the
// model once with what is wrong; a second wrong one fails the turn with `invalid_output`, which takes the turn's
// messages back out of the transcript like every failed turn, so no unanswered tool_use is left behind.
import type { StopReason } from '@anthropic-ai/sdk/resources/messages';
import { patched, setCurrentDetails } from '@temporalio/workflow';
import { INVALID_OUTPUT } from '../common/conversation-types';
import type { Protocol, ReplyReading, ToolCall, ToolOutcome } from '../common/protocols/types';
import {
  afterAnswer,
  ANSWER_RECEIVED,
  type AnswerCheck,
  answerTooEarlyText,
  correctionText,
  missingAnswerText,
  type OutputSpec,
} from '../common/structured-output';
import { checkedAnswer } from './answer-check';
import { runToolCalls, type ToolRun } from './run-tool-calls';

/** The workflow's patch: histories from before ran the other calls of an early answer past the turn's limit. */
export const TYPED_ANSWER_TOOL_LIMIT_PATCH = 'typed-answer-tool-call-limit';

/** `done`: the turn ended; `next`: ask the model again; `tools`: not an answer, the loop runs the tool calls. */
export type TypedReplyStep = 'done' | 'next' | 'tools';

export async function handleTypedReply(
  run: ToolRun & { protocol: Protocol },
  stopReason: StopReason | null,
  reading: ReplyReading,
): Promise<TypedReplyStep> {
  const spec = run.state.currentTurn?.output;
  if (!spec) return 'tools';
  return spec.mode === 'native'
    ? nativeAnswer(run, spec, stopReason, reading)
    : toolAnswer(run, spec, stopReason, reading);
}

/** Native: a reply without tool calls is the answer, JSON text. */
async function nativeAnswer(
  run: ToolRun,
  spec: OutputSpec,
  stopReason: StopReason | null,
  reading: ReplyReading,
): Promise<TypedReplyStep> {
  if (reading.toolCalls.length > 0) return 'tools';
  const check = await checkedAnswer(spec.schema, { text: reading.text });
  return settle(run, spec, stopReason, check, reading.text, (error) => {
    run.state.appendResults({ role: 'user', content: correctionText(spec, error) });
  });
}

/** Tool: the answer is the answer tool's input; the other tools run as usual until the model calls it. */
async function toolAnswer(
  run: ToolRun & { protocol: Protocol },
  spec: OutputSpec,
  stopReason: StopReason | null,
  reading: ReplyReading,
): Promise<TypedReplyStep> {
  const { state, protocol } = run;
  const answers = reading.toolCalls.filter((call) => call.name === spec.toolName);
  if (reading.toolCalls.length === 0) {
    // Ended with prose (tool_choice `any` should prevent it): a missing answer, told once, then forced.
    const check: AnswerCheck = { ok: false, error: `no ${spec.toolName} call` };
    return settle(run, spec, stopReason, check, reading.text, () => {
      state.appendResults({ role: 'user', content: missingAnswerText(spec) });
    });
  }
  if (answers.length === 0) return 'tools';
  const others = reading.toolCalls.filter((call) => call.name !== spec.toolName);
  if (others.length > 0) {
    // Those calls count against the turn's tool-call limit like any reply's (histories from before ran them all).
    if (state.wouldPassToolCallLimit(others.length) && patched(TYPED_ANSWER_TOOL_LIMIT_PATCH)) {
      state.stopAtToolCallLimit(others.length, stopReason);
      return 'done';
    }
    // The answer came with other calls: those run, the answer is not checked (its data may need their results).
    const results = await runToolCalls(run, others);
    // The other calls' outcomes in the model's order, each answer call's error in its place: one pass, not an
    // indexOf per call (quadratic in the calls of a reply, which the model decides).
    let next = 0;
    const outcomes = reading.toolCalls.map((call): ToolOutcome =>
      call.name === spec.toolName
        ? { callId: call.id, name: call.name, isError: true, content: answerTooEarlyText(spec) }
        : results[next++]!,
    );
    state.appendResults(protocol.renderResults(outcomes));
    return 'next';
  }
  const call: ToolCall = answers[0]!;
  const check: AnswerCheck =
    answers.length > 1
      ? { ok: false, error: `${spec.toolName} was called ${answers.length} times; call it once` }
      : call.malformed
        ? { ok: false, error: call.malformed }
        : await checkedAnswer(spec.schema, { value: call.input });
  // Every answer call gets its tool_result, so the transcript stays valid whatever follows.
  const answered = ({ content, isError }: { content: string; isError: boolean }) =>
    state.appendResults(
      protocol.renderResults(answers.map((answer) => ({ callId: answer.id, name: answer.name, isError, content }))),
    );
  const text = check.ok ? JSON.stringify(check.value) : '';
  return settle(
    run,
    spec,
    stopReason,
    check,
    text,
    (error) => answered({ content: correctionText(spec, error), isError: true }),
    () => answered({ content: ANSWER_RECEIVED, isError: false }),
  );
}

/**
 * Records the checked answer and acts on it: the turn ends with the value, or the model is told what is wrong
 * (`correct`), or the turn fails with `invalid_output`. `accepted` runs before the turn ends (the tool_result).
 */
function settle(
  run: ToolRun,
  spec: OutputSpec,
  stopReason: StopReason | null,
  check: AnswerCheck,
  text: string,
  correct: (error: string) => void,
  accepted?: () => void,
): TypedReplyStep {
  const { state } = run;
  const attempts = state.recordAnswerAttempt({ forceAnswer: !check.ok && spec.mode === 'tool' });
  const decision = afterAnswer(check, attempts);
  if (decision === 'accept' && check.ok) {
    accepted?.();
    const status = state.options.closeAfterFirstReply ? 'completed' : 'awaiting_user';
    state.finishTurn({ text, stopReason, status, answer: { output: check.value } });
    return 'done';
  }
  const error = check.ok ? '' : check.error;
  if (decision === 'retry') {
    setCurrentDetails(`The answer does not match its schema; asking once more: ${error}`);
    correct(error);
    return 'next';
  }
  const message = `The model's answer did not match the schema after ${attempts} attempts: ${error}`;
  state.failTurn({ type: INVALID_OUTPUT, message });
  setCurrentDetails(`Turn failed (${INVALID_OUTPUT}): ${message}`);
  return 'done';
}
