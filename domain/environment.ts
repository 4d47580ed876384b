/** The two environments; a request's environment always comes from its API key, never a field. */
export const environments = ['test', 'live'] as const;
export type Environment = (typeof environments)[number];
