import type { Environment } from '../domain/environment.js';
import type { RailId, RailRequirement } from '../domain/rails.js';

/** Where a USDT rail is read in one environment (overridable: RPC_URL_<RAIL>_<ENV>, USDT_CONTRACT_<RAIL>_<ENV>). */
export interface RailEndpoint {
  /** The first (preferred) RPC of `rpcUrls`: what a single read uses. */
  rpcUrl: string;
  /**
   * Every RPC configured for the rail, in failover order (`RPC_URL_<RAIL>_<ENV>` takes a
   * comma-separated list). Watchers read windows from two or more of them when there are two or
   * more (rails/chain/README.md). The defaults list one public endpoint.
   */
  rpcUrls?: readonly string[];
  /**
   * EVM rails: the chain id the RPCs must answer to `eth_chainId` and the checkout's wallet URIs
   * name (`CHAIN_ID_<RAIL>_<ENV>`, defaulting to the public network's, `chainIds`).
   */
  chainId?: number;
  /** Token contract (TRON base58, EVM 0x…) or SPL mint; undefined where no canonical test token exists. */
  usdtContract: string | undefined;
  /**
   * EVM rails: the EIP-7702 delegate sponsored sweep plans name (docs/treasury.md), eth-infinitism's
   * `Simple7702Account` v0.8 by default (`SWEEP_DELEGATE_<RAIL>_<ENV>`, `none` to offer no
   * sponsored plans); undefined where there is none.
   */
  sweepDelegate?: string | undefined;
}

/**
 * Everything static about one rail, in its adapter folder. Fee and time figures are estimates for a
 * USDT transfer to a fresh address (research/chains.md): shown to customers, never used for money.
 */
export interface RailFacts {
  id: RailId;
  /** Which adapter reads and pays it: the wire client, scanner and address scheme of rails/<family>/. */
  family: 'mpesa' | 'tron' | 'evm' | 'solana' | (string & {});
  /** Decimals of the rail's token: USDT has 18 on BSC and 6 elsewhere; M-Pesa takes whole shillings. */
  decimals: number;
  /** Which store connection makes the rail available (spec, availability rules 1 to 4). */
  requires: RailRequirement;
  /**
   * Paid by a prompt on the customer's phone and the operator's answer (M-Pesa), as its method's
   * `receives: 'prompt'` says (test/unit/rail-registry.test.ts checks they agree): the link
   * workflow, which may not import methods, reads it here.
   */
  prompted?: true;
  displayName: string;
  tokenSymbol: 'KES' | 'USDT';
  tokenStandard?: string;
  /** USDT rails: the chain's own coin, which a careless wallet would send instead of USDT (the checkout warns). */
  nativeCoin?: string;
  chainLogo: string;
  tokenLogo?: string;
  estimatedFeeUsd?: string;
  estimatedConfirmationSeconds: number;
  tagline: string;
  /** USDT rails: the network's short name in invoices and `transfer.confirmed` events. */
  network?: string;
  /** USDT rails: public endpoints by environment (test keys use testnets, live keys mainnets). */
  endpoints?: Readonly<Record<Environment, RailEndpoint>>;
  /** USDT rails: how often a caught-up watcher looks for new blocks, by the chain's block time. */
  pollMs?: number;
  /**
   * USDT rails: the chain's nominal block time (a slot on Solana), in seconds. Turns a watcher's
   * lag in blocks into seconds (`malipo_chain_lag_seconds`); an estimate, never used for money.
   */
  blockSeconds?: number;
  /**
   * EVM rails: the EIP-155 chain id of the public network each environment pays on (testnet for
   * test keys, mainnet for live): the default of `CHAIN_ID_<RAIL>_<ENV>`, which the checkout's
   * wallet URIs name and the RPCs must report at start (docs/checkout.md, "Which chain id").
   */
  chainIds?: Readonly<Record<Environment, number>>;
}

/** The facts of a USDT rail, whose chain fields are always set. */
export type ChainRailFacts = RailFacts & Required<Pick<RailFacts, 'network' | 'endpoints' | 'pollMs' | 'blockSeconds'>>;
