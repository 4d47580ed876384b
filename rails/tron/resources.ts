import { z } from 'zod';
import { tronPost, TronReadError, type TronReadOptions } from './client.js';

/**
 * The reads a TRON sweep plan needs, through java-tron's HTTP API (`visible: true`, base58):
 * the head block (the plan's reference block), the chain's fee parameters, an account's existence
 * and free bandwidth, and how much of a Stake 2.0 account's staked TRX can be delegated as energy.
 * java-tron leaves zero fields out of its JSON (proto3), so every count defaults to 0.
 */
const num = z.number().int().nonnegative().optional().default(0);

const nowBlock = z.object({
  blockID: z.string().regex(/^[0-9a-fA-F]{64}$/),
  block_header: z.object({ raw_data: z.object({ number: z.number().int().nonnegative(), timestamp: z.number().int().nonnegative() }) }),
});

export interface TronHead {
  number: bigint;
  id: string;
  timestampMs: number;
}

/** `/wallet/getnowblock`: the head block, which a plan's transactions reference. */
export async function readTronHead(url: string, opts: TronReadOptions = {}): Promise<TronHead> {
  const parsed = nowBlock.safeParse(await tronPost(url, '/wallet/getnowblock', {}, opts));
  if (!parsed.success) throw new TronReadError('TronGrid /wallet/getnowblock answered an unexpected shape');
  return { number: BigInt(parsed.data.block_header.raw_data.number), id: parsed.data.blockID.toLowerCase(), timestampMs: parsed.data.block_header.raw_data.timestamp };
}

const chainParameters = z.object({ chainParameter: z.array(z.object({ key: z.string(), value: z.number().int().optional() })) });

export interface TronFees {
  /** Sun burned per unit of energy a transaction lacks (`getEnergyFee`). */
  energySun: bigint;
  /** Sun burned per byte of bandwidth a transaction lacks (`getTransactionFee`). */
  bandwidthSun: bigint;
  /** Sun burned, on top, by a TRX transfer that creates the recipient's account (`getCreateNewAccountFeeInSystemContract`). */
  newAccountSun: bigint;
}

/** `/wallet/getchainparameters`: what energy, bandwidth and a new account cost now. */
export async function readTronFees(url: string, opts: TronReadOptions = {}): Promise<TronFees> {
  const parsed = chainParameters.safeParse(await tronPost(url, '/wallet/getchainparameters', {}, opts));
  if (!parsed.success) throw new TronReadError('TronGrid /wallet/getchainparameters answered an unexpected shape');
  const value = (key: string) => {
    const v = parsed.data.chainParameter.find((p) => p.key === key)?.value;
    if (v === undefined) throw new TronReadError(`TronGrid /wallet/getchainparameters has no ${key}`);
    return BigInt(v);
  };
  return { energySun: value('getEnergyFee'), bandwidthSun: value('getTransactionFee'), newAccountSun: value('getCreateNewAccountFeeInSystemContract') };
}

const accountResource = z.object({
  freeNetUsed: num, freeNetLimit: num, NetUsed: num, NetLimit: num, EnergyUsed: num, EnergyLimit: num,
  TotalEnergyLimit: num, TotalEnergyWeight: num,
}).passthrough();

export interface TronAccountState {
  /** Whether the account exists on chain (a TRC-20 receipt does not create one; a TRX transfer does). */
  exists: boolean;
  /**
   * Bandwidth it may use now without burning TRX (the free 600 a day, and any staked or delegated);
   * for an address with no account yet, the free allowance it will have once a TRX transfer creates it.
   */
  bandwidth: bigint;
  /** The network's energy per staked TRX: TotalEnergyLimit / TotalEnergyWeight. */
  totalEnergyLimit: bigint;
  totalEnergyWeight: bigint;
}

/** `/wallet/getaccount` (exists: anything but `{}`) and `/wallet/getaccountresource` of one address. */
export async function readTronAccount(url: string, address: string, opts: TronReadOptions = {}): Promise<TronAccountState> {
  const [account, resource] = await Promise.all([
    tronPost(url, '/wallet/getaccount', { address, visible: true }, opts),
    tronPost(url, '/wallet/getaccountresource', { address, visible: true }, opts),
  ]);
  const r = accountResource.safeParse(resource);
  if (!r.success || account === null || typeof account !== 'object') throw new TronReadError('TronGrid /wallet/getaccountresource answered an unexpected shape');
  const exists = Object.keys(account).length > 0;
  const free = BigInt(Math.max(0, r.data.freeNetLimit - r.data.freeNetUsed)) + BigInt(Math.max(0, r.data.NetLimit - r.data.NetUsed));
  return { exists, bandwidth: exists ? free : BigInt(r.data.freeNetLimit), totalEnergyLimit: BigInt(r.data.TotalEnergyLimit), totalEnergyWeight: BigInt(r.data.TotalEnergyWeight) };
}

/** `/wallet/getcandelegatedmaxsize` (type 1, ENERGY): the staked sun an account can delegate as energy now; `{}` means none. */
export async function readDelegatableEnergySun(url: string, owner: string, opts: TronReadOptions = {}): Promise<bigint> {
  const parsed = z.object({ max_size: num }).safeParse(await tronPost(url, '/wallet/getcandelegatedmaxsize', { owner_address: owner, type: 1, visible: true }, opts));
  if (!parsed.success) throw new TronReadError('TronGrid /wallet/getcandelegatedmaxsize answered an unexpected shape');
  return BigInt(parsed.data.max_size);
}

const estimate = z.object({
  result: z.object({ result: z.boolean().optional() }).optional(),
  energy_used: num,
  transaction: z.object({ ret: z.array(z.object({ ret: z.string().optional() })).optional() }).passthrough().optional(),
});

/** The energy a contract call would use now (`/wallet/triggerconstantcontract` run as `owner`); throws when it would revert. */
export async function estimateTronEnergy(url: string, call: { owner: string; contract: string; functionSelector: string; parameter: string }, opts: TronReadOptions = {}): Promise<bigint> {
  const body = { owner_address: call.owner, contract_address: call.contract, function_selector: call.functionSelector, parameter: call.parameter, visible: true };
  const parsed = estimate.safeParse(await tronPost(url, '/wallet/triggerconstantcontract', body, opts));
  if (!parsed.success || parsed.data.result?.result !== true) throw new TronReadError('TronGrid could not estimate the transfer');
  if (parsed.data.transaction?.ret?.[0]?.ret === 'FAILED') throw new TronReadError('the transfer would revert');
  return BigInt(parsed.data.energy_used);
}
