import { utils } from 'tronweb';
import { tronAddressFromBytes, tronAddressToEvmHex } from '../../rails/tron/address.js';
import { chainFees, type TronAccounts } from './accounts.js';
import type { TokenTransfer, TronChain } from './jsonrpc.js';

/**
 * `/wallet/broadcasttransaction` as java-tron answers it (tronprotocol/documentation-en,
 * api/http/transaction/broadcasttransaction): a signed transaction's JSON (`raw_data`, its
 * `signature`s; `visible` picks base58 or `41…` hex addresses) is checked the way the node checks
 * one before taking it into its pool, and a refusal comes back as `{code, txid, message}` with
 * the message's UTF-8 in hex; `{result: true, txid}` otherwise. The node builds the transaction
 * from `raw_data` and ignores `raw_data_hex`; so does this, with TronWeb's own protobuf encoding
 * (not Malipo's), so the id it signs over is computed independently of the code under test.
 *
 * Checked on broadcast: one signature recovering to the contract's owner (SIGERROR), the
 * expiration after the head block and at most a day ahead (TRANSACTION_EXPIRATION_ERROR), the
 * reference block on the chain (TAPOS_ERROR), a transaction seen before (DUP_TRANSACTION_ERROR),
 * the contract valid against the state now (CONTRACT_VALIDATE_ERROR), the owner able to pay its
 * bandwidth (BANDWITH_ERROR, java-tron's spelling). Applied when the next block is mined
 * (jsonrpc.ts): TRX moved and accounts created (1 TRX new-account fee plus 0.1 TRX, java-tron's
 * `getCreateNewAccountFeeInSystemContract` and `getCreateAccountFee`); energy lent and taken back;
 * a USDT `transfer` paying its energy from energy delegated to the sender first, then by burning
 * TRX at the energy price up to the transaction's `fee_limit` (OUT_OF_ENERGY beyond it), its
 * bandwidth from the sender's free 600 a day, else burned at the bandwidth price.
 */
export interface BroadcastState {
  chain: TronChain;
  accounts: TronAccounts;
  /** Token contract 41-hex → holder 41-hex → balance. */
  tokens: Map<string, Map<string, bigint>>;
  /** Energy a token transfer takes, by whether the recipient holds the token already. */
  transferEnergy(recipientHolds: boolean): number;
}

class Refusal extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

const hexText = (s: string) => Buffer.from(s, 'utf8').toString('hex');
const maxExpirationAheadMs = 24 * 3600 * 1000;
const maxFeeLimitSun = 15_000_000_000n;

type Contract =
  | { type: 'TransferContract'; owner: string; to: string; amount: bigint }
  | { type: 'TriggerSmartContract'; owner: string; contract: string; data: Buffer; feeLimit: bigint }
  | { type: 'DelegateResourceContract' | 'UnDelegateResourceContract'; owner: string; receiver: string; balance: bigint; resource: string };

function address41(value: unknown, visible: boolean): string {
  if (typeof value !== 'string') throw new Refusal('OTHER_ERROR', 'address missing');
  if (visible) return `41${tronAddressToEvmHex(value).slice(2)}`;
  if (!/^41[0-9a-fA-F]{40}$/.test(value)) throw new Refusal('OTHER_ERROR', `invalid address ${value}`);
  return value.toLowerCase();
}

function parseContract(rawData: Record<string, any>, visible: boolean): Contract {
  const c = rawData.contract?.[0];
  const v = c?.parameter?.value ?? {};
  switch (c?.type) {
    case 'TransferContract':
      return { type: c.type, owner: address41(v.owner_address, visible), to: address41(v.to_address, visible), amount: BigInt(v.amount ?? 0) };
    case 'TriggerSmartContract':
      return { type: c.type, owner: address41(v.owner_address, visible), contract: address41(v.contract_address, visible), data: Buffer.from(String(v.data ?? ''), 'hex'), feeLimit: BigInt(rawData.fee_limit ?? 0) };
    case 'DelegateResourceContract':
    case 'UnDelegateResourceContract':
      return { type: c.type, owner: address41(v.owner_address, visible), receiver: address41(v.receiver_address, visible), balance: BigInt(v.balance ?? 0), resource: String(v.resource ?? 'BANDWIDTH') };
    default:
      throw new Refusal('CONTRACT_VALIDATE_ERROR', `the emulator does not run ${String(c?.type)}`);
  }
}

/** The bandwidth a transaction consumes: its serialized size with one signature, plus the 64 bytes java-tron counts per result. */
function bandwidthOf(rawHexLength: number): bigint {
  const raw = rawHexLength / 2;
  const lengthBytes = raw < 128 ? 1 : raw < 16_384 ? 2 : 3;
  return BigInt(1 + lengthBytes + raw + 67 + 64);
}

export function answerBroadcast(state: BroadcastState, body: unknown): Record<string, unknown> {
  let txid = '';
  try {
    if (!body || typeof body !== 'object' || !('raw_data' in body)) throw new Refusal('OTHER_ERROR', 'raw_data is required');
    const tx = body as { raw_data: Record<string, any>; signature?: unknown; visible?: unknown };
    const pb = utils.transaction.txJsonToPb(tx as never);
    txid = String(utils.transaction.txPbToTxID(pb)).replace(/^0x/, '');
    const rawHex = String(utils.transaction.txPbToRawDataHex(pb)).replace(/^0x/, '');
    const contract = parseContract(tx.raw_data, tx.visible === true);
    const signatures = Array.isArray(tx.signature) ? tx.signature : [];
    if (signatures.length !== 1 || typeof signatures[0] !== 'string' || !/^[0-9a-fA-F]{130}$/.test(signatures[0])) {
      throw new Refusal('SIGERROR', 'Validate signature error: miss sig or contract');
    }
    let signer: string;
    try {
      signer = utils.crypto.ecRecover(txid, signatures[0]).toLowerCase();
    } catch {
      throw new Refusal('SIGERROR', 'Validate signature error: signature is not valid');
    }
    if (signer !== contract.owner) {
      throw new Refusal('SIGERROR', `Validate signature error: ${signer} is signed by ${tronAddressFromBytes(Buffer.from(signer.slice(2), 'hex'))} but it is not contained of permission.`);
    }
    const head = state.chain.head;
    const expiration = Number(tx.raw_data.expiration);
    if (!(expiration > head.timestampMs)) throw new Refusal('TRANSACTION_EXPIRATION_ERROR', `Transaction expired`);
    if (expiration > head.timestampMs + maxExpirationAheadMs) throw new Refusal('TRANSACTION_EXPIRATION_ERROR', 'Transaction expiration time is too far in the future');
    if (!state.chain.hasReferenceBlock(String(tx.raw_data.ref_block_bytes), String(tx.raw_data.ref_block_hash))) throw new Refusal('TAPOS_ERROR', 'Tapos check error');
    if (state.chain.knows(txid)) throw new Refusal('DUP_TRANSACTION_ERROR', 'dup transaction');
    validate(state, contract);
    const bandwidth = bandwidthOf(rawHex.length);
    const { accounts } = state;
    if (accounts.freeBandwidth(contract.owner) < Number(bandwidth) && accounts.trxOf(contract.owner) < bandwidth * BigInt(chainFees.getTransactionFee)) {
      throw new Refusal('BANDWITH_ERROR', 'Account resource insufficient error.');
    }
    const id = txid;
    state.chain.submit({ id, execute: () => execute(state, contract, bandwidth) });
    return { result: true, txid };
  } catch (err) {
    if (err instanceof Refusal) return { code: err.code, txid, message: hexText(err.message) };
    return { code: 'OTHER_ERROR', txid, message: hexText((err as Error).message) };
  }
}

function validate(state: BroadcastState, c: Contract): void {
  const { accounts } = state;
  if (!accounts.exists(c.owner)) throw new Refusal('CONTRACT_VALIDATE_ERROR', 'Validate Contract error: account does not exist');
  switch (c.type) {
    case 'TransferContract': {
      if (c.amount <= 0n) throw new Refusal('CONTRACT_VALIDATE_ERROR', 'Amount must be greater than 0.');
      if (c.owner === c.to) throw new Refusal('CONTRACT_VALIDATE_ERROR', 'Cannot transfer TRX to yourself.');
      const fee = accounts.exists(c.to) ? 0n : BigInt(chainFees.getCreateNewAccountFeeInSystemContract + chainFees.getCreateAccountFee);
      if (accounts.trxOf(c.owner) < c.amount + fee) throw new Refusal('CONTRACT_VALIDATE_ERROR', 'Validate TransferContract error, balance is not sufficient.');
      return;
    }
    case 'TriggerSmartContract':
      if (!state.tokens.has(c.contract)) throw new Refusal('CONTRACT_VALIDATE_ERROR', 'No contract or not a smart contract');
      if (c.feeLimit < 0n || c.feeLimit > maxFeeLimitSun) throw new Refusal('CONTRACT_VALIDATE_ERROR', 'feeLimit must be >= 0 and <= 15000000000');
      return;
    case 'DelegateResourceContract': {
      if (c.resource !== 'ENERGY') throw new Refusal('CONTRACT_VALIDATE_ERROR', 'the emulator lends energy only');
      const refusal = accounts.delegateRefusal(c.owner, c.receiver, c.balance);
      if (refusal) throw new Refusal('CONTRACT_VALIDATE_ERROR', refusal);
      return;
    }
    case 'UnDelegateResourceContract': {
      const refusal = accounts.undelegateRefusal(c.owner, c.receiver, c.balance);
      if (refusal) throw new Refusal('CONTRACT_VALIDATE_ERROR', refusal);
      return;
    }
  }
}

const transferSelector = 'a9059cbb';

/** Applies a transaction a block took; its TransactionInfo fields and the token transfers it made. */
function execute(state: BroadcastState, c: Contract, bandwidth: bigint): { info: Record<string, unknown>; transfers: TokenTransfer[] } {
  const { accounts } = state;
  const receipt: Record<string, unknown> = {};
  let fee = 0n;
  const failed = (message: string, extra: Record<string, unknown> = {}) => ({
    info: { fee: Number(fee), result: 'FAILED', resMessage: hexText(message), receipt: { ...receipt, ...extra } }, transfers: [],
  });
  // Bandwidth: an account's creation is paid by its own fee; otherwise the free 600 a day, else TRX.
  const creates = c.type === 'TransferContract' && !accounts.exists(c.to);
  if (creates) {
    const newAccount = BigInt(chainFees.getCreateNewAccountFeeInSystemContract + chainFees.getCreateAccountFee);
    accounts.burn(c.owner, newAccount);
    fee += newAccount;
    receipt.net_fee = chainFees.getCreateAccountFee;
  } else if (accounts.freeBandwidth(c.owner) >= Number(bandwidth)) {
    accounts.useFreeBandwidth(c.owner, Number(bandwidth));
    receipt.net_usage = Number(bandwidth);
  } else {
    const burn = bandwidth * BigInt(chainFees.getTransactionFee);
    if (accounts.trxOf(c.owner) < burn) return failed('Account resource insufficient error.');
    accounts.burn(c.owner, burn);
    fee += burn;
    receipt.net_fee = Number(burn);
  }
  switch (c.type) {
    case 'TransferContract':
      if (accounts.trxOf(c.owner) < c.amount) return failed('balance is not sufficient');
      accounts.sendTrx(c.owner, c.to, c.amount);
      return { info: { fee: Number(fee), receipt }, transfers: [] };
    case 'DelegateResourceContract': {
      const refusal = accounts.delegate(c.owner, c.receiver, c.balance);
      return refusal ? failed(refusal) : { info: { fee: Number(fee), receipt }, transfers: [] };
    }
    case 'UnDelegateResourceContract': {
      const refusal = accounts.undelegate(c.owner, c.receiver, c.balance);
      return refusal ? failed(refusal) : { info: { fee: Number(fee), receipt }, transfers: [] };
    }
    case 'TriggerSmartContract':
      return callToken(state, c, receipt, fee);
  }
}

function callToken(state: BroadcastState, c: Extract<Contract, { type: 'TriggerSmartContract' }>, receipt: Record<string, unknown>, feeSoFar: bigint): { info: Record<string, unknown>; transfers: TokenTransfer[] } {
  const { accounts } = state;
  const token = state.tokens.get(c.contract)!;
  const isTransfer = c.data.length === 68 && c.data.subarray(0, 4).toString('hex') === transferSelector;
  const to = isTransfer ? `41${c.data.subarray(16, 36).toString('hex')}` : '';
  const amount = isTransfer ? BigInt(`0x${c.data.subarray(36, 68).toString('hex')}`) : 0n;
  const reverts = !isTransfer || (token.get(c.owner) ?? 0n) < amount;
  const need = BigInt(reverts ? 1_000 : state.transferEnergy((token.get(to) ?? 0n) > 0n));
  // Energy lent to the caller first, then TRX burned at the energy price, up to fee_limit.
  const lent = accounts.energyLimit(c.owner) - accounts.energyUsedBy(c.owner);
  const fromStake = lent > 0n ? (lent < need ? lent : need) : 0n;
  const burnNeeded = (need - fromStake) * BigInt(chainFees.getEnergyFee);
  const canBurn = [c.feeLimit, accounts.trxOf(c.owner)].reduce((a, b) => (a < b ? a : b));
  let fee = feeSoFar;
  if (burnNeeded > canBurn) {
    accounts.useEnergy(c.owner, fromStake);
    accounts.burn(c.owner, canBurn);
    fee += canBurn;
    return {
      info: { fee: Number(fee), result: 'FAILED', resMessage: hexText('Not enough energy'), contractResult: [''], receipt: { ...receipt, energy_usage: Number(fromStake), energy_fee: Number(canBurn), energy_usage_total: Number(need), result: 'OUT_OF_ENERGY' } },
      transfers: [],
    };
  }
  accounts.useEnergy(c.owner, fromStake);
  accounts.burn(c.owner, burnNeeded);
  fee += burnNeeded;
  const energy = { energy_usage: Number(fromStake), energy_fee: Number(burnNeeded), energy_usage_total: Number(need) };
  if (reverts) {
    return { info: { fee: Number(fee), result: 'FAILED', resMessage: hexText('REVERT opcode executed'), contractResult: [''], receipt: { ...receipt, ...energy, result: 'REVERT' } }, transfers: [] };
  }
  token.set(c.owner, (token.get(c.owner) ?? 0n) - amount);
  token.set(to, (token.get(to) ?? 0n) + amount);
  const base58 = (hex41: string) => tronAddressFromBytes(Buffer.from(hex41.slice(2), 'hex'));
  return {
    info: { fee: Number(fee), contractResult: ['1'.padStart(64, '0')], contract_address: c.contract, receipt: { ...receipt, ...energy, result: 'SUCCESS' } },
    transfers: [{ contract: base58(c.contract), from: base58(c.owner), to: base58(to), amount }],
  };
}
