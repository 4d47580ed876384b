import type { Logger } from 'pino';
import type { DatabasePool } from 'slonik';
import type { Cursor } from '../db/chain-repo.js';
import type { WalletSlot } from '../db/wallet-repo.js';
import type { WatchFamily } from '../db/watch-repo.js';
import type { Environment } from '../domain/environment.js';
import type { RailId, UsdtRail } from '../domain/rails.js';
import type { WatchSet } from './chain/watch-set.js';
import type { ReconcileChain } from './chain/reconcile-view.js';
import type { TickResult } from './evm/scan-tick.js';
import type { RailFacts } from './facts.js';
import type { RailSettings } from './settings.js';

/**
 * A payment method: how one rail family is paid and read, behind one interface (BTCPay's payment
 * handlers, Hyperswitch's connectors). Each family's folder exports one object: `rails/mpesa/`,
 * `rails/evm/` (BSC, Ethereum and Polygon share it; each chain is a rail of facts), `rails/tron/`,
 * `rails/solana/`. The rest of the system asks the rail's method (rails/methods.ts) or adapter
 * (rails/adapters.ts) instead of branching on a rail id or family: adding a rail is its folder and
 * a registry line (docs/adding-a-rail.md).
 *
 * Two levels, because workflows and config may only import pure code:
 * - `PaymentMethod` is the pure rules: how a link receives, the store key and its validation, the
 *   payment URI and what the checkout shows, addresses' ledger form, what the watcher reads.
 * - `RailAdapter` adds the reads that touch a chain or an operator: the scan tick, balances and
 *   the reconciler's view; and, declared for the issues to come, paybill payments and sweep plans.
 */
export type Family = RailFacts['family'];

/**
 * How a link of the rail is told apart from every other payment:
 * - `derived_address`: a fresh address of the store's xpub per link (TRON, EVM);
 * - `reference`: one store wallet, each link found by a reference key in the transfer (Solana Pay);
 * - `prompt`: the customer is prompted on their phone and the operator calls back (M-Pesa STK).
 */
export type ReceiveScheme = 'derived_address' | 'reference' | 'prompt';

/** A store key as connected: what is stored, and what the merchant compares with their wallet. */
export interface ConnectedKey {
  key: string;
  firstAddress: string;
  /** The derivation path of `firstAddress`; null where the key is an address (Solana). */
  firstAddressPath: string | null;
}

/** A refused store key, with a message the merchant can act on. */
export class StoreKeyError extends Error {}

/** What a wallet-keyed rail needs from the store, and how its key is checked and read. */
export interface WalletKey {
  /** The store's wallet slot (one per family that takes a wallet key; the API's wallet routes). */
  slot: WalletSlot;
  /** `xpub`: an account-level extended public key; `address`: a wallet (owner) address. */
  input: 'xpub' | 'address';
  /** The account's derivation path (xpubs only), e.g. m/44'/60'/0'. */
  accountPath: string | null;
  /** One key per store: an xpub's addresses must never reach two stores. A wallet address may be shared. */
  exclusive: boolean;
  /** Validates and normalises a key; throws StoreKeyError. */
  parse(raw: string): ConnectedKey;
  /** The receive addresses `from` … `from + count - 1` of a key, as the wallet lists them (none for an address key). */
  receiveAddresses(key: string, from: number, count: number): Array<{ index: number; path: string; address: string }>;
}

/** What one rail asks the customer's wallet to do, for one amount. */
export interface RailPaymentRequest {
  /** The QR code's text. */
  payUri: string;
  /** What "Open in wallet" opens; null where no wallet honours a URI (TRON). */
  walletUri: string | null;
  chainId: number | null;
  tokenContract: string | null;
}

export interface PaymentRequestInput {
  rail: RailId;
  environment: Environment;
  address: string;
  /** What the customer should send now, in micro-USDT. */
  amountMicro: bigint;
  /** Reference rails only: the link's reference and mint, its store's name and its id. */
  reference?: { reference: string; mint: string | null; label: string; linkId: string };
}

/** The pure rules of a rail family. */
export interface PaymentMethod {
  family: Family;
  receives: ReceiveScheme;
  /** The unit amounts are shown in: whole shillings for M-Pesa, USDT for the chains. */
  amountUnit: 'KES' | 'USDT';
  /** The wallet key the store connects; null for an operator's credentials (M-Pesa: rails/mpesa/validate-credentials.ts). */
  walletKey: WalletKey | null;
  /** Reference rails: a new reference key for one link (Solana Pay's), which the watcher finds the payment by. */
  newReference?(): string;
  /**
   * Prompted rails a payer may also pay from their own menu (M-Pesa's paybill): a short reference
   * a person types to name the link (rails/mpesa/account-ref.ts), unique per store and environment.
   */
  newPayerReference?(): string;
  /** Reference rails: the transfer request naming a payment's reference, with the amount as written (an invoice's `paymentAddress`). */
  referenceUri?(p: { recipient: string; amount: string; reference: string; label: string | null; linkId: string; mint?: string }): string;
  /** Whether `CHAIN_ID_<RAIL>_<ENV>` applies (the EIP-155 chain id the wallet URIs name). */
  takesChainId: boolean;
  /** What a `USDT_CONTRACT_<RAIL>_<ENV>` value must be, or null when `value` is one. */
  contractProblem(value: string): string | null;
  /** The payment request (QR / wallet URI) for one amount; null when the rail is paid otherwise. */
  paymentRequest(rails: RailSettings, p: PaymentRequestInput): RailPaymentRequest | null;
  /** What the checkout shows: a phone prompt form or a transfer panel, with the hint's message key. */
  checkout: { panel: 'prompt' | 'transfer'; hint: 'tronHint' | 'evmHint' | 'solHint' | null };
  /** The form an address is recorded and matched in (EVM lowercased; others as given). */
  ledgerKey(address: string): string;
  /**
   * What the chain watcher reads, or null for a prompted rail: the watch set's family and whether
   * the reconciler reads balances at the watcher's cursor (a block height; the EVM chains).
   */
  watching: { watchFamily: WatchFamily; balancesAtCursor: boolean } | null;
}

/** What a scan tick is handed by the chain activities. */
export interface ScanContext {
  pool: DatabasePool;
  rails: RailSettings;
  logger?: Pick<Logger, 'warn' | 'info'>;
  /** The process-wide watch set of (watch family, environment). */
  watchSet(family: WatchFamily, environment: Environment): WatchSet;
}

/** A rail the deployment has not configured (no token contract, no usable RPC): retried, never final. */
export class RailNotConfiguredError extends Error {}

/** What the treasury read of one rail's handed-out addresses (docs/treasury.md). */
export interface RailHoldings {
  /** Per holder, in order, in the token's smallest unit; undefined where its read failed. */
  token: Array<bigint | undefined>;
  /** Per holder, in order, in the native coin's smallest unit; undefined where its read failed. */
  native: Array<bigint | undefined>;
  /** The block the balances are at, and its time (seconds since the epoch). */
  blockNumber: bigint;
  blockTimestamp: bigint;
  /** The requests the read made, for measurement (batching keeps it far below one per holder). */
  requests: number;
}

/**
 * How a rail's treasury is read (issue 30): the balances of the addresses Malipo handed out
 * (`holdings`), or why there is nothing to read (`none`, with the sentence the API and the
 * dashboard show, e.g. Solana: payments arrive in the merchant's own wallet).
 */
export type TreasuryCapability =
  | {
      kind: 'holdings';
      /** The native coin's decimals (the gas the addresses would need to move their tokens). */
      nativeDecimals: number;
      /**
       * Token and native balances of `holders` (as `ledgerKey` forms them), in batches; throws when
       * no configured provider answered. Null when the rail has no token contract in the environment.
       */
      read(rails: RailSettings, rail: UsdtRail, environment: Environment, holders: readonly string[]): Promise<RailHoldings> | null;
      /** A sweep destination as typed, in the ledger form; null when it is no address of the chain (or the zero address). */
      parseDestination(raw: string): string | null;
    }
  | { kind: 'none'; reason: string }
  /** A rail whose treasury read is not built yet: the API and the dashboard say so, with `reason`. */
  | { kind: 'not_built'; reason: string };

/** A sweep the adapter cannot plan now (nothing to sweep, funding short, a balance unread), with a sentence for the merchant. */
export class SweepPlanRefused extends Error {}

/** A sponsored sweep plan the rail cannot offer in this environment (no EIP-7702 delegate configured, or none deployed on the chain): the request's `kind` is wrong. */
export class SweepKindUnavailable extends SweepPlanRefused {}

/** What a broadcast tells the sweep ledger (services/treasury/sweep-ledger.ts), by the transaction's index in the plan. */
export interface SweepLedgerHooks {
  /**
   * Before each transaction is sent: records it under its hash (known before sending: a TRON
   * txID, keccak256 of a signed EVM transaction) as `broadcast`, so a process that dies once the
   * node took it leaves the ledger knowing it. Throws SweepPlanRefused, recording nothing, once
   * the broadcast ran past its time (the follower takes over then). Idempotent.
   */
  beforeSend(index: number, hash: string): Promise<void>;
  /** The node refused the transaction and holds none of that hash: it will not be mined, and is recorded `dropped`. */
  refused(index: number): Promise<void>;
  mined(index: number, status: 'success' | 'reverted', blockNumber: bigint): Promise<void>;
}

/** What a re-read found of one sent sweep transaction (`sweepTxChecks`). */
export interface SweepTxCheck {
  state: 'broadcast' | 'mined' | 'failed' | 'dropped';
  /** The block it is in; null when in none. */
  blockNumber: bigint | null;
}

/** A sweep plan as the adapter made it: JSON-ready (money as decimal strings), stored and answered as is. */
export interface SweepPlanBody {
  sources: Array<{ address: string; path: string | null; amountMinor: string }>;
  transactions: ReadonlyArray<object>;
  /** The most the plan's fees and top-ups can cost, in the native coin's smallest unit. */
  maxFeeWei: string;
  topUpWei: string;
}

/** The pure rules and the reads that touch a chain or an operator. */
export interface RailAdapter extends PaymentMethod {
  /** The treasury's balance read of the rail's handed-out addresses; absent for a rail with no treasury (M-Pesa). */
  treasury?: TreasuryCapability;
  /** One watcher tick of a scanned rail: read new transfers, settle seen deposits. */
  scanTick?(ctx: ScanContext, rail: UsdtRail, environment: Environment, cursor: Cursor | null, nowMs: number): Promise<TickResult>;
  /** One address's token balance, read live for a person waiting (derived wallets' balances). */
  readBalance?(rpcUrl: string, contract: string, address: string): Promise<bigint>;
  /** The reconciler's view of the rail; null when it has no token in the environment or is not reconciled. */
  reconcileView?(rails: RailSettings, rail: UsdtRail, environment: Environment): ReconcileChain | null;
  /** Issue 29 and after: paying out to a paybill (M-Pesa B2B); declared, not built. */
  payPaybill?(input: { rail: RailId; environment: Environment; amountMinor: bigint; paybill: string; account: string }): Promise<{ reference: string }>;
  /**
   * Issue 30: an unsigned, deterministic plan moving every token on `sources` to `destination`,
   * gas topped up from `funding` (EVM: rails/evm/sweep-plan.ts). Throws SweepPlanRefused with a
   * sentence for the merchant when it cannot plan (nothing to sweep, funding short).
   */
  sweepPlan?(
    rails: RailSettings,
    rail: UsdtRail,
    environment: Environment,
    input: { sources: ReadonlyArray<{ address: string; path: string | null }>; destination: string; funding: string },
  ): Promise<SweepPlanBody>;
  /**
   * Issue 30: verifies signed transactions against a stored plan (sender, recipient, token, amount,
   * nonce, chain id, fees; SweepPlanRefused on any difference, nothing sent) and broadcasts them in
   * order, top-ups first, each followed until mined.
   */
  /**
   * Issue 30: the highest block of the rail a sweep's transaction counts as final at: the head less
   * the rail's configured confirmations (`CONFIRMATIONS_<RAIL>`) plus one, or the chain's own
   * finalized block where none is configured. Null when no RPC answered.
   */
  sweepFinalizedHeight?(rails: RailSettings, rail: UsdtRail, environment: Environment): Promise<bigint | null>;
  /**
   * Issue 30 follow-up: re-reads each sent sweep transaction not yet at its end (`planned` is its
   * entry in the plan's `transactions`): in a block (`mined`, or `failed` when it reverted) and
   * which, in none (`broadcast`: pending, or taken out by a reorganisation), or `dropped` (it
   * never will be: its sender's nonce was taken by another transaction at the final height).
   * With that height (as `sweepFinalizedHeight`). Null when no RPC answered.
   */
  sweepTxChecks?(
    rails: RailSettings,
    rail: UsdtRail,
    environment: Environment,
    txs: ReadonlyArray<{ hash: string; planned: object }>,
  ): Promise<{ height: bigint; txs: SweepTxCheck[] } | null>;
  /**
   * Issue 30: a sponsored plan (EVM: rails/evm/sponsored-plan.ts): each source signs an EIP-7702
   * authorization and its transfer, and one transaction from `funding` moves everything, with no
   * top-ups. Throws SweepKindUnavailable where the chain or configuration has no delegate.
   * `broadcastSweep` takes its signed transaction like any plan's.
   */
  sponsoredSweepPlan?(
    rails: RailSettings,
    rail: UsdtRail,
    environment: Environment,
    input: { sources: ReadonlyArray<{ address: string; path: string | null }>; destination: string; funding: string },
  ): Promise<SweepPlanBody>;
  broadcastSweep?(
    rails: RailSettings,
    rail: UsdtRail,
    environment: Environment,
    plan: SweepPlanBody,
    signed: readonly string[],
    /** Called once everything verified, before anything is sent: false refuses (the plan was broadcast already). */
    claim: () => Promise<boolean>,
    /** Told of each transaction (by its index in the plan) before it is sent, if the node refused it, and as it is mined: the sweep ledger. */
    ledger?: SweepLedgerHooks,
  ): Promise<{ transactions: Array<{ kind: string; hash: string; status: 'success' | 'reverted'; blockNumber: string }> }>;
}
