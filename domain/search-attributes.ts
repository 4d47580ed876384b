import { defineSearchAttributeKey } from '@temporalio/common';

/** Custom search attributes registered on the dev server and documented for a cluster. */
export const searchAttributes = {
  status: defineSearchAttributeKey('MalipoStatus', 'KEYWORD'),
  store: defineSearchAttributeKey('MalipoStore', 'KEYWORD'),
  environment: defineSearchAttributeKey('MalipoEnvironment', 'KEYWORD'),
  merchantRef: defineSearchAttributeKey('MalipoMerchantRef', 'KEYWORD'),
  rail: defineSearchAttributeKey('MalipoRail', 'KEYWORD'),
} as const;

export const allSearchAttributeKeys = Object.values(searchAttributes);
