/**
 * What a dashboard user may do in a store. Ranked: each role may do everything the roles below
 * it may.
 * - viewer: read every page of the store; change nothing.
 * - developer: also create, cancel and simulate links, manage API keys and webhook endpoints.
 * - owner: also decide where money goes (M-Pesa, wallets), the store's settings and its team.
 */
export const roles = ['owner', 'developer', 'viewer'] as const;
export type Role = (typeof roles)[number];

const rank: Record<Role, number> = { viewer: 0, developer: 1, owner: 2 };

export const roleAllows = (held: Role, needed: Role): boolean => rank[held] >= rank[needed];

export const isRole = (value: unknown): value is Role => typeof value === 'string' && (roles as readonly string[]).includes(value);

export const roleLabels: Record<Role, string> = { owner: 'Owner', developer: 'Developer', viewer: 'Viewer' };
