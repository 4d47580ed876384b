import type { RailRequirement, UsdtRail } from './rails.js';

/** What a link was given to be paid at, and what the chain watcher recorded. */
export interface DepositEvidence {
  toAddress: string;
  decimals: number;
  linkAddresses: { tron: string | null; evm: string | null; solana: string | null };
}

/** `<txHash>:<logIndex>`, the key a deposit is known by (Solana: `<signature>:0`). */
export function parseDepositKey(key: string): { txHash: string; logIndex: number } | null {
  const at = key.lastIndexOf(':');
  if (at <= 0) return null;
  const logIndex = Number(key.slice(at + 1));
  if (!Number.isSafeInteger(logIndex) || logIndex < 0) return null;
  return { txHash: key.slice(0, at), logIndex };
}

/**
 * Whether a recorded deposit can count for a link on `rail`: it went to the address the link
 * gave for that rail (EVM addresses compare without case; on Solana the recipient is the
 * merchant's wallet and the reference identified the link) in the rail's token units.
 * `facts` are the rail's (rails/registry.ts). Returns the problem, or null when it holds.
 */
export function depositEvidenceProblem(rail: UsdtRail, facts: { decimals: number; requires: RailRequirement }, e: DepositEvidence): string | null {
  if (e.decimals !== facts.decimals) return `recorded with ${e.decimals} decimals; ${rail} has ${facts.decimals}`;
  const requirement = facts.requires;
  const expected =
    requirement === 'tron_xpub' ? e.linkAddresses.tron : requirement === 'evm_xpub' ? e.linkAddresses.evm?.toLowerCase() : e.linkAddresses.solana;
  const actual = requirement === 'evm_xpub' ? e.toAddress.toLowerCase() : e.toAddress;
  if (!expected) return `the link has no ${rail} address`;
  if (actual !== expected) return `paid to ${e.toAddress}, not to the link's ${rail} address`;
  return null;
}
