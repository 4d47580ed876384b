import bs58 from 'bs58';
import type { Ledger } from './ledger.js';
import { renderSignatureInfo, renderStatus, renderTransaction, type Encoding } from './render.js';
import type { Commitment } from './types.js';

/** A JSON-RPC error as the node sends it (codes from agave's rpc_custom_error.rs and JSON-RPC 2.0). */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export const apiVersion = '2.2.14';
const maxSignaturesForAddress = 1_000;
const maxStatuses = 256;
/** Statuses of rooted slots stay in the recent status cache for MAX_RECENT_BLOCKHASHES slots. */
const recentStatusSlots = 300;

const invalidParams = (message: string) => new RpcError(-32602, message);

type Config = Record<string, unknown>;

function configOf(value: unknown): Config {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw invalidParams('Invalid params: invalid type: expected a configuration object');
  return value as Config;
}

/** The node's default commitment is `finalized`; the history methods refuse anything below `confirmed`. */
function commitmentOf(config: Config, atLeastConfirmed: boolean): Commitment {
  const c = config.commitment ?? 'finalized';
  if (c !== 'processed' && c !== 'confirmed' && c !== 'finalized') throw invalidParams(`Invalid params: unknown variant \`${String(c)}\`, expected one of \`processed\`, \`confirmed\`, \`finalized\``);
  if (atLeastConfirmed && c === 'processed') throw invalidParams('Method does not support commitment below `confirmed`');
  return c;
}

function checkMinContextSlot(config: Config, contextSlot: number): void {
  const min = config.minContextSlot;
  if (typeof min === 'number' && min > contextSlot) throw new RpcError(-32016, 'Minimum context slot has not been reached', { contextSlot });
}

function decoded(value: unknown, bytes: number): string {
  if (typeof value !== 'string') throw invalidParams('Invalid params: invalid type: expected a string');
  let raw: Uint8Array;
  try {
    raw = bs58.decode(value);
  } catch {
    throw invalidParams('Invalid param: Invalid');
  }
  if (raw.length !== bytes) throw invalidParams('Invalid param: WrongSize');
  return value;
}

function getSignaturesForAddress(ledger: Ledger, params: unknown[]) {
  const address = decoded(params[0], 32);
  const config = configOf(params[1]);
  const commitment = commitmentOf(config, true);
  checkMinContextSlot(config, ledger.slotAt(commitment));
  const limit = config.limit ?? maxSignaturesForAddress;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > maxSignaturesForAddress) {
    throw invalidParams(`Invalid limit; max ${maxSignaturesForAddress}`);
  }
  let list = ledger.history(address, commitment);
  // Like the node: an unknown `before` yields nothing, an unknown `until` sets no lower bound.
  if (config.before !== undefined) {
    const at = list.findIndex((tx) => tx.signature === decoded(config.before, 64));
    list = at < 0 ? [] : list.slice(at + 1);
  }
  if (config.until !== undefined) {
    const at = list.findIndex((tx) => tx.signature === decoded(config.until, 64));
    if (at >= 0) list = list.slice(0, at);
  }
  return list.slice(0, limit).map((tx) => renderSignatureInfo(tx, tx.slot <= ledger.root));
}

function getTransaction(ledger: Ledger, params: unknown[]) {
  const signature = decoded(params[0], 64);
  // The old positional form passes the encoding as a bare string.
  const config = typeof params[1] === 'string' ? { encoding: params[1] } : configOf(params[1]);
  const commitment = commitmentOf(config, true);
  const encoding = (config.encoding ?? 'json') as string;
  if (encoding !== 'json' && encoding !== 'jsonParsed') throw invalidParams(`Invalid params: the emulator serves the json and jsonParsed encodings, not ${encoding}`);
  const tx = ledger.get(signature, commitment);
  if (!tx) return null;
  const max = config.maxSupportedTransactionVersion;
  if (tx.version === 0 && max === undefined) {
    throw new RpcError(
      -32015,
      'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
    );
  }
  return renderTransaction(tx, encoding as Encoding, max !== undefined);
}

function getSignatureStatuses(ledger: Ledger, params: unknown[]) {
  if (!Array.isArray(params[0])) throw invalidParams('Invalid params: invalid type: expected a sequence');
  const signatures = params[0].map((s) => decoded(s, 64));
  if (signatures.length > maxStatuses) throw invalidParams(`Too many inputs provided; max ${maxStatuses}`);
  const searchHistory = configOf(params[1]).searchTransactionHistory === true;
  const value = signatures.map((s) => {
    const tx = ledger.get(s, 'confirmed');
    if (!tx || (!searchHistory && tx.slot < ledger.root - recentStatusSlots)) return null;
    return renderStatus(tx, ledger.tip, ledger.root);
  });
  return { context: { apiVersion, slot: ledger.tip }, value };
}

function getSlot(ledger: Ledger, params: unknown[]) {
  const config = configOf(params[0]);
  const slot = ledger.slotAt(commitmentOf(config, false));
  checkMinContextSlot(config, slot);
  return slot;
}

export const methods: Record<string, (ledger: Ledger, params: unknown[]) => unknown> = {
  getSignaturesForAddress,
  getTransaction,
  getSignatureStatuses,
  getSlot,
  getHealth: () => 'ok',
  getVersion: () => ({ 'feature-set': 3_294_202_862, 'solana-core': apiVersion }),
};
