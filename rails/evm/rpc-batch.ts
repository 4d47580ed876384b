import { chunksOf } from './holdings.js';

/**
 * JSON-RPC batches: many calls of one kind (`eth_getTransactionCount`, `eth_call`) in few HTTP
 * requests, `size` a request, answered in order. Throws when the node answers no batch or leaves
 * a call unanswered: a sweep plan is made from every answer or not at all.
 */
export async function rpcBatch(url: string, calls: ReadonlyArray<{ method: string; params: unknown[] }>, size = 250): Promise<string[]> {
  const out: string[] = [];
  for (const chunk of chunksOf(calls, size)) {
    const body = chunk.map((c, id) => ({ jsonrpc: '2.0', id, method: c.method, params: c.params }));
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(20_000) });
    const answers = (await res.json()) as Array<{ id: number; result?: unknown }>;
    if (!Array.isArray(answers)) throw new Error('the node answered no batch');
    const byId = new Map(answers.map((a) => [a.id, a.result]));
    for (let i = 0; i < chunk.length; i++) {
      const r = byId.get(i);
      if (typeof r !== 'string') throw new Error(`the node answered no ${chunk[i]!.method}`);
      out.push(r);
    }
  }
  return out;
}
