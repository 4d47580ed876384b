import { inParallel } from '../chain/reads.js';
import { readTrc20Balance } from './client.js';
import { nextTurn } from '../chain/event-loop.js';

/**
 * TRC-20 balances of many holders for the reconciler. TronGrid's constant call
 * (`/wallet/triggerconstantcontract`) answers one call per request and has no batch form, so
 * this is one request per holder, a few at a time, with a turn of the event loop between groups.
 * An entry is undefined when its call failed.
 */
export const tronBalanceConcurrency = 8;
const holdersPerGroup = 200;

export async function trc20Balances(baseUrl: string, token: string, holders: readonly string[], opts: { timeoutMs?: number; apiKey?: string } = {}): Promise<Array<bigint | undefined>> {
  const out: Array<bigint | undefined> = [];
  for (let at = 0; at < holders.length; at += holdersPerGroup) {
    const group = holders.slice(at, at + holdersPerGroup);
    out.push(...(await inParallel(group, tronBalanceConcurrency, (holder) => readTrc20Balance(baseUrl, token, holder, opts).catch(() => undefined))));
    await nextTurn();
  }
  return out;
}
