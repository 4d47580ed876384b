import { defineSearchAttributeKey } from '@temporalio/common';

/** Custom search attributes registered on the dev server and documented for a cluster. */
export const searchAttributes = {
  status: defineSearchAttributeKey('MalipoStatus', 'KEYWORD'),
  store: defineSearchAttributeKey('MalipoStore', 'KEYWORD'),
  environment: defineSearchAttributeKey('MalipoEnvironment', 'KEYWORD'),
  merchantRef: defineSearchAttributeKey('MalipoMerchantRef', 'KEYWORD'),
  rail: defineSearchAttributeKey('MalipoRail', 'KEYWORD'),
  /** A settled link's end of the late-payment watch (its workflow runs until then): domain/link-display.ts. */
  watchUntil: defineSearchAttributeKey('MalipoWatchUntil', 'DATETIME'),
} as const;

export const allSearchAttributeKeys = Object.values(searchAttributes);

/** A key's type as `temporal` flags and `temporal operator search-attribute create --type` spell it. */
export const cliTypeOf = (k: (typeof allSearchAttributeKeys)[number]): 'Keyword' | 'Datetime' => (k.type === 'DATETIME' ? 'Datetime' : 'Keyword');

