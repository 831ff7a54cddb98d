// A typed answer's schema that is costly to check on purpose: an item is tried against each of 12 tagged objects until
// one matches (25 units of work for the last tag), so the size of an answer sets how much its check costs.
export const TAGGED_UNION_SCHEMA = {
  type: 'object',
  properties: {
    items: {
      type: 'array',
      items: {
        anyOf: Array.from({ length: 12 }, (_, tag) => ({
          type: 'object',
          properties: { tag: { const: tag } },
          required: ['tag'],
        })),
      },
    },
  },
  required: ['items'],
};

/** An answer of `count` items, each tagged `tag`. */
export const taggedItems = (count: number, tag: unknown) => ({ items: Array.from({ length: count }, () => ({ tag })) });
