import bs58 from 'bs58';
import { uiTokenAmount } from './transfer.js';
import { programs, type LedgerTx, type TokenBalance } from './types.js';

export type Encoding = 'json' | 'jsonParsed';

/**
 * A ledger transaction in the encodings of `getTransaction` (solana.com/docs/rpc/http/gettransaction
 * and docs/rpc/json-structures): `json` shows compiled instructions over account indexes with the
 * message header; `jsonParsed` shows annotated account keys ({pubkey, signer, source, writable})
 * and the instructions the node knows how to parse. Cross-program invocations are not modelled,
 * so `innerInstructions` is always empty.
 */
export function renderTransaction(tx: LedgerTx, encoding: Encoding, withVersion: boolean) {
  return {
    blockTime: tx.blockTime,
    meta: renderMeta(tx, encoding),
    slot: tx.slot,
    transaction: { message: renderMessage(tx, encoding), signatures: [tx.signature] },
    ...(withVersion ? { version: tx.version } : {}),
  };
}

const tokenBalance = (b: TokenBalance) => ({
  accountIndex: b.accountIndex,
  mint: b.mint,
  owner: b.owner,
  programId: programs.token,
  uiTokenAmount: uiTokenAmount(b.amount, b.decimals),
});

function renderMeta(tx: LedgerTx, encoding: Encoding) {
  return {
    computeUnitsConsumed: tx.computeUnitsConsumed,
    err: tx.err,
    fee: tx.fee,
    innerInstructions: [],
    // jsonParsed marks looked-up keys in accountKeys (`source`) instead of listing them here.
    ...(encoding === 'json' && tx.version === 0 ? { loadedAddresses: { readonly: [], writable: [] } } : {}),
    logMessages: tx.logMessages,
    postBalances: tx.postBalances,
    postTokenBalances: tx.postTokenBalances.map(tokenBalance),
    preBalances: tx.preBalances,
    preTokenBalances: tx.preTokenBalances.map(tokenBalance),
    rewards: [],
    status: tx.err === null ? { Ok: null } : { Err: tx.err },
  };
}

function renderMessage(tx: LedgerTx, encoding: Encoding) {
  const lookups = tx.version === 0 ? { addressTableLookups: [] } : {};
  if (encoding === 'jsonParsed') {
    return {
      accountKeys: tx.keys.map((k) => ({ pubkey: k.pubkey, signer: k.signer, source: 'transaction', writable: k.writable })),
      ...lookups,
      instructions: tx.instructions.map((ix) => ({ parsed: ix.parsed.parsed, program: ix.parsed.program, programId: ix.programId, stackHeight: null })),
      recentBlockhash: tx.recentBlockhash,
    };
  }
  const index = (pubkey: string) => tx.keys.findIndex((k) => k.pubkey === pubkey);
  return {
    accountKeys: tx.keys.map((k) => k.pubkey),
    ...lookups,
    header: {
      numReadonlySignedAccounts: tx.keys.filter((k) => k.signer && !k.writable).length,
      numReadonlyUnsignedAccounts: tx.keys.filter((k) => !k.signer && !k.writable).length,
      numRequiredSignatures: tx.keys.filter((k) => k.signer).length,
    },
    instructions: tx.instructions.map((ix) => ({
      accounts: ix.accounts.map(index),
      data: bs58.encode(ix.data),
      programIdIndex: index(ix.programId),
      stackHeight: null,
    })),
    recentBlockhash: tx.recentBlockhash,
  };
}

/** An entry of getSignaturesForAddress; `memo` is the node's "[length] text" form, joined by "; ". */
export function renderSignatureInfo(tx: LedgerTx, finalized: boolean) {
  return {
    blockTime: tx.blockTime,
    confirmationStatus: finalized ? 'finalized' : 'confirmed',
    err: tx.err,
    memo: tx.memos.length ? tx.memos.map((m) => `[${Buffer.byteLength(m)}] ${m}`).join('; ') : null,
    signature: tx.signature,
    slot: tx.slot,
  };
}

/** An entry of getSignatureStatuses: `confirmations` counts blocks since, null once rooted. */
export function renderStatus(tx: LedgerTx, tip: number, root: number) {
  const finalized = tx.slot <= root;
  return {
    confirmationStatus: finalized ? 'finalized' : 'confirmed',
    confirmations: finalized ? null : tip - tx.slot,
    err: tx.err,
    slot: tx.slot,
    status: tx.err === null ? { Ok: null } : { Err: tx.err },
  };
}
