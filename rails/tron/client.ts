import { z } from 'zod';
import { tronAddressToEvmHex } from './address.js';

/**
 * Read access to TRON through TronGrid's HTTP API (or any java-tron full node, which serves the
 * same `/wallet/*` routes), as plain functions of a base URL for the API and the chain watchers.
 * Requests use `visible: true`, so addresses travel as base58 and `result.message` is plain text.
 */
export interface TronReadOptions {
  timeoutMs?: number;
  /** TronGrid's `TRON-PRO-API-KEY`; keyless traffic is throttled. */
  apiKey?: string;
}

/** A failed read. The message never carries the base URL or the API key. */
export class TronReadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TronReadError';
  }
}

// TransactionExtention, as /wallet/triggerconstantcontract answers (tronprotocol/documentation-en).
const constantCallResponse = z.object({
  result: z.object({ result: z.boolean().optional(), code: z.string().optional(), message: z.string().optional() }).optional(),
  constant_result: z.array(z.string()).optional(),
  transaction: z.object({ ret: z.array(z.object({ ret: z.string().optional() })).optional() }).passthrough().optional(),
  Error: z.string().optional(),
});

export interface ConstantCall {
  ownerAddress: string;
  contractAddress: string;
  functionSelector: string;
  /** ABI-encoded arguments, hex without 0x. */
  parameter: string;
}

/** One POST to a java-tron HTTP route; the parsed JSON, or TronReadError. */
export async function tronPost(baseUrl: string, path: string, body: unknown, opts: TronReadOptions): Promise<unknown> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (opts.apiKey) headers['TRON-PRO-API-KEY'] = opts.apiKey;
  let res: Response;
  try {
    res = await fetch(`${baseUrl.replace(/\/+$/, '')}${path}`, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000) });
  } catch (err) {
    throw new TronReadError(`TronGrid ${path} unreachable: ${(err as Error).name === 'TimeoutError' ? 'timed out' : ((err as Error).cause as Error | undefined)?.message ?? (err as Error).message}`);
  }
  const text = await res.text();
  if (!res.ok) throw new TronReadError(`TronGrid ${path} answered HTTP ${res.status}`);
  try {
    return JSON.parse(text);
  } catch {
    throw new TronReadError(`TronGrid ${path} answered something that is not JSON`);
  }
}

/** A read-only contract call; returns `constant_result[0]` (hex) or throws on any failure shape. */
export async function triggerConstantContract(baseUrl: string, call: ConstantCall, opts: TronReadOptions = {}): Promise<string> {
  const path = '/wallet/triggerconstantcontract';
  const parsed = constantCallResponse.safeParse(
    await tronPost(baseUrl, path, {
      owner_address: call.ownerAddress,
      contract_address: call.contractAddress,
      function_selector: call.functionSelector,
      parameter: call.parameter,
      visible: true,
    }, opts),
  );
  if (!parsed.success) throw new TronReadError(`TronGrid ${path} answered an unexpected shape`);
  const r = parsed.data;
  if (r.Error) throw new TronReadError(`TronGrid ${path} refused the call: ${r.Error}`);
  if (r.result?.result !== true) {
    throw new TronReadError(`TronGrid ${path} failed: ${r.result?.code ?? 'no result'}${r.result?.message ? ` (${r.result.message})` : ''}`);
  }
  if (r.transaction?.ret?.[0]?.ret === 'FAILED') {
    throw new TronReadError(`${call.functionSelector} reverted${r.result.message ? `: ${r.result.message}` : ''}`);
  }
  const value = r.constant_result?.[0];
  if (value === undefined || !/^[0-9a-fA-F]+$/.test(value)) throw new TronReadError(`${call.functionSelector} returned no data`);
  return value;
}

/** `balanceOf(holder)` of a TRC-20 token in its smallest unit; the holder asks about itself. */
export async function readTrc20Balance(baseUrl: string, token: string, holder: string, opts: TronReadOptions = {}): Promise<bigint> {
  const parameter = tronAddressToEvmHex(holder).slice(2).padStart(64, '0');
  const result = await triggerConstantContract(baseUrl, { ownerAddress: holder, contractAddress: token, functionSelector: 'balanceOf(address)', parameter }, opts);
  if (result.length !== 64) throw new TronReadError(`balanceOf returned ${result.length / 2} bytes, not 32`);
  return BigInt(`0x${result}`);
}

// protocol.Block as /walletsolidity/getnowblock answers it (tronprotocol/documentation-en,
// api/http/block-and-tx-query/getnowblock): `blockID` is the block hash in hex without 0x.
const nowBlockResponse = z.object({
  blockID: z.string().regex(/^[0-9a-fA-F]{64}$/),
  block_header: z.object({ raw_data: z.object({ number: z.number().int().nonnegative(), timestamp: z.number().int().nonnegative().optional() }) }),
});

/**
 * The latest solidified block, from the node's solidity API (`/walletsolidity/getnowblock`): what
 * TRON calls final (confirmed by two thirds of the super representatives, about 19 blocks behind
 * the head). Asked here rather than as JSON-RPC's `finalized` tag, which many java-tron releases
 * and providers refuse (they accept only `latest` and `earliest`).
 */
export async function readSolidifiedBlock(baseUrl: string, opts: TronReadOptions = {}): Promise<{ number: bigint; id: string; timestampMs: number | null }> {
  const path = '/walletsolidity/getnowblock';
  const parsed = nowBlockResponse.safeParse(await tronPost(baseUrl, path, {}, opts));
  if (!parsed.success) throw new TronReadError(`TronGrid ${path} answered an unexpected shape`);
  const raw = parsed.data.block_header.raw_data;
  return { number: BigInt(raw.number), id: `0x${parsed.data.blockID.toLowerCase()}`, timestampMs: raw.timestamp ?? null };
}
