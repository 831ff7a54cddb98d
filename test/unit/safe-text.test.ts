// Strings that leave a workflow in a protobuf string field: well-formed and bounded, whatever they quote.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import { BoundedFailureConverter, MAX_FAILURE_MESSAGE_CHARS } from '../../common/converters/bounded-failure-converter';
import { LenientPayloadConverter } from '../../common/converters/payload-converter';
import { isWellFormed, wellFormed, wellFormedText } from '../../common/safe-text';
import { isUndecodable, UNDECODABLE_ENCODING } from '../../common/undecodable';

const encode = (text: string) => new TextEncoder().encode(text);

describe('safe text', () => {
  test('a lone surrogate, high or low, becomes U+FFFD; pairs and other text stay as they are', () => {
    assert.equal(wellFormed('a\ud800b'), 'a\ufffdb');
    assert.equal(wellFormed('a\udc00'), 'a\ufffd');
    assert.equal(wellFormed('\ud800\ud800\udc00'), '\ufffd\ud800\udc00');
    assert.equal(wellFormed('emoji 😀 ok'), 'emoji 😀 ok');
    assert.equal(isWellFormed(wellFormed('\udfff\ud800')), true);
    assert.equal(isWellFormed('\udfff\ud800'), false);
  });

  test('wellFormedText names the rule a text broke, never the text', () => {
    const schema = wellFormedText(5, 'The reason');
    assert.equal(schema.safeParse('fine').success, true);
    assert.deepEqual(
      schema.safeParse('\ud800').error?.issues.map((i) => i.message),
      ['The reason is not well-formed Unicode (it has a lone surrogate).'],
    );
    assert.deepEqual(
      schema.safeParse('toolong').error?.issues.map((i) => i.message),
      ['The reason has 7 characters; the limit is 5.'],
    );
  });
});

describe('the bounded failure converter', () => {
  const converter = new BoundedFailureConverter();

  test('a message with a lone surrogate, or of megabytes, leaves well-formed and bounded; so do its causes', () => {
    const cause = new Error(`cause \udc00 ${'c'.repeat(3 * 2 ** 20)}`);
    const failure = converter.errorToFailure(
      ApplicationFailure.create({ message: `bad \ud800 ${'m'.repeat(3 * 2 ** 20)}`, cause }),
      defaultPayloadConverter,
    );
    for (const level of [failure, failure.cause!]) {
      assert.equal(isWellFormed(level.message!), true);
      assert.ok(level.message!.length <= MAX_FAILURE_MESSAGE_CHARS, `${level.message!.length} characters`);
      assert.equal(isWellFormed(level.stackTrace!), true);
    }
    assert.match(failure.message!, /^bad \ufffd m+\n\[output truncated: \d+ of \d+ characters omitted\]$/);
  });

  test('with encodeCommonAttributes the bounded message moves into the payload, as the SDK does', () => {
    const encoding = new BoundedFailureConverter({ encodeCommonAttributes: true });
    const failure = encoding.errorToFailure(new Error(`secret \ud800`), defaultPayloadConverter);
    assert.equal(failure.message, 'Encoded failure');
    const attributes = defaultPayloadConverter.fromPayload<{ message: string }>(failure.encodedAttributes!);
    assert.equal(attributes.message, 'secret \ufffd');
    const back = encoding.failureToError(failure, defaultPayloadConverter);
    assert.equal(back.message, 'secret \ufffd');
  });
});

describe('the lenient payload converter', () => {
  const converter = new LenientPayloadConverter();

  test('reads what the default converter reads', () => {
    assert.deepEqual(converter.fromPayload(defaultPayloadConverter.toPayload({ a: [1, 'b'] })), { a: [1, 'b'] });
    assert.equal(converter.fromPayload(defaultPayloadConverter.toPayload(undefined)), undefined);
  });

  test('an unknown encoding, bytes that are not JSON, a codec-marked payload: a value that says why', () => {
    const unknown = converter.fromPayload({ metadata: { encoding: encode('binary/evil') }, data: encode('x') });
    assert.ok(isUndecodable(unknown));
    assert.match(unknown.undecodablePayload, /Unknown encoding: binary\/evil/);
    const notJson = converter.fromPayload({ metadata: { encoding: encode('json/plain') }, data: encode('{"a": ') });
    assert.ok(isUndecodable(notJson));
    const marked = converter.fromPayload({
      metadata: { encoding: encode(UNDECODABLE_ENCODING) },
      data: encode('Refusing a payload that is not encrypted'),
    });
    assert.deepEqual(marked, { undecodablePayload: 'Refusing a payload that is not encrypted' });
    const noMetadata = converter.fromPayload({ data: encode('1') });
    assert.ok(isUndecodable(noMetadata));
  });
});
