// How the local Messages API splits a reply when it emits tokens slowly (testing/messages-api/respond.ts tokens()).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tokens } from '../../testing/messages-api/respond';

test('slow tokens: a word with its trailing space each, long words in pieces of 8 characters, nothing lost', () => {
  assert.deepEqual(tokens('The price is 38.50.'), ['The ', 'price ', 'is ', '38.50.']);
  assert.deepEqual(tokens('{"company_name":"General Motors"}'), ['{"compan', 'y_name":', '"General', ' ', 'Motors"}']);
  const text = '  leading spaces, emoji 👋🏽 and\nnew lines ';
  assert.equal(tokens(text).join(''), text);
  assert.deepEqual(tokens(''), []);
});
