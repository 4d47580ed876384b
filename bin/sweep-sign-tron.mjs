// The offline signer's TRON branch (docs/treasury.md, "Sweep plans (TRON)"), imported by
// bin/sweep-sign.mjs only. It trusts none of the plan's JSON descriptions: it decodes each
// transaction's raw_data_hex (the protobuf the key signs), checks that its txID is that hex's
// SHA-256 and that it does only what a TRON sweep may (a TRX transfer from the funding account to
// a source; energy delegated to a source and taken back; a source's whole USDT to the
// destination), derives every source's address from its m/44'/195'/… path, and signs each txID
// with secp256k1. No network code is imported here.
import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import { keccak256 } from 'viem';

const sha256 = (bytes) => createHash('sha256').update(bytes).digest();

/** The base58check TRON address of 21 bytes (0x41 ‖ 20). */
function base58Address(bytes21) {
  const payload = Buffer.from(bytes21);
  return bs58.encode(Buffer.concat([payload, sha256(sha256(payload)).subarray(0, 4)]));
}

/** The TRON address of a viem account (its uncompressed public key's keccak tail). */
export function tronAddressOf(account) {
  const pub = Buffer.from(account.publicKey.slice(4), 'hex');
  return base58Address(Buffer.concat([Buffer.from([0x41]), Buffer.from(keccak256(pub).slice(2), 'hex').subarray(12)]));
}

/** Protobuf fields of `buf` as [number, wire value] pairs (varints as bigint, length-delimited as Buffer). */
function fields(buf) {
  const out = [];
  let at = 0;
  const varint = () => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      if (at >= buf.length) throw new Error('truncated varint');
      const b = buf[at++];
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      shift += 7n;
    }
  };
  while (at < buf.length) {
    const key = Number(varint());
    const wire = key & 7;
    if (wire === 0) out.push([key >> 3, varint()]);
    else if (wire === 2) {
      const len = Number(varint());
      if (at + len > buf.length) throw new Error('truncated field');
      out.push([key >> 3, buf.subarray(at, at + len)]);
      at += len;
    } else throw new Error(`wire type ${wire}`);
  }
  return out;
}

const one = (fs, n) => {
  const all = fs.filter(([k]) => k === n);
  if (all.length > 1) throw new Error(`field ${n} twice`);
  return all[0]?.[1];
};

const contractTypes = { 1: 'TransferContract', 31: 'TriggerSmartContract', 57: 'DelegateResourceContract', 58: 'UnDelegateResourceContract' };

/** What a raw_data_hex does: its one contract's type and values, and its expiration. */
export function decodeTronRaw(hex) {
  const raw = fields(Buffer.from(hex, 'hex'));
  const contracts = raw.filter(([k]) => k === 11);
  if (contracts.length !== 1) throw new Error('not exactly one contract');
  const c = fields(contracts[0][1]);
  const type = contractTypes[Number(one(c, 1) ?? 0n)];
  const any = fields(one(c, 2) ?? Buffer.alloc(0));
  if (!type || String(one(any, 1)) !== `type.googleapis.com/protocol.${type}`) throw new Error('an unknown contract type');
  const v = fields(one(any, 2) ?? Buffer.alloc(0));
  const addr = (n) => (one(v, n) ? base58Address(one(v, n)) : undefined);
  const int = (n) => one(v, n) ?? 0n;
  const value =
    type === 'TransferContract' ? { owner: addr(1), to: addr(2), amount: int(3) }
    : type === 'TriggerSmartContract' ? { owner: addr(1), contract: addr(2), callValue: int(3), data: (one(v, 4) ?? Buffer.alloc(0)).toString('hex'), tokenValue: int(5) }
    : { owner: addr(1), resource: int(2), balance: int(3), receiver: addr(4), lock: int(5) };
  return { type, value, expiration: one(raw, 8) ?? 0n };
}

/** Checks a TRON plan against the mnemonic and every transaction's bytes; throws with the first problem. */
export function checkTronPlan(plan, deriveAt, fundingAddress) {
  if (plan.funding !== fundingAddress) throw new Error(`the funding key is ${fundingAddress}, not the plan's funding address ${plan.funding}`);
  const signers = new Map();
  const amounts = new Map();
  for (const s of plan.sources) {
    if (typeof s.path !== 'string' || !/^m\/44'\/195'\/\d+'\/[01]\/\d+$/.test(s.path)) throw new Error(`source ${s.address} has no TRON derivation path`);
    const account = deriveAt(s.path);
    if (tronAddressOf(account) !== s.address) throw new Error(`${s.path} derives ${tronAddressOf(account)}, not ${s.address}: wrong mnemonic or a tampered plan`);
    signers.set(s.address, account);
    amounts.set(s.address, BigInt(s.amountMinor));
  }
  const transferWord = (a) => `a9059cbb${Buffer.from(bs58.decode(plan.destination)).subarray(1, 21).toString('hex').padStart(64, '0')}${a.toString(16).padStart(64, '0')}`;
  const transferred = new Set();
  const delegated = new Map();
  let total = 0n;
  let topUps = 0n;
  const checked = plan.transactions.map((tx, i) => {
    if (sha256(Buffer.from(tx.raw_data_hex, 'hex')).toString('hex') !== tx.txID) throw new Error(`transaction ${i}'s txID is not the SHA-256 of its raw_data_hex`);
    const { type, value, expiration } = decodeTronRaw(tx.raw_data_hex);
    if (BigInt(expiration) !== BigInt(plan.expiresAtMs)) throw new Error(`transaction ${i} expires at ${expiration}, not with the plan`);
    if (type === 'TransferContract') {
      if (value.owner !== plan.funding || !signers.has(value.to)) throw new Error(`a TRX transfer goes from ${value.owner} to ${value.to}: only from the funding account to a source`);
      topUps += value.amount;
      return { tx, owner: value.owner };
    }
    if (type === 'DelegateResourceContract' || type === 'UnDelegateResourceContract') {
      if (value.owner !== plan.funding || !signers.has(value.receiver) || value.resource !== 1n || value.lock !== 0n) throw new Error(`a delegation from ${value.owner} to ${value.receiver} is not energy lent by the funding account to a source`);
      const key = value.receiver;
      delegated.set(key, (delegated.get(key) ?? 0n) + (type === 'DelegateResourceContract' ? value.balance : -value.balance));
      return { tx, owner: value.owner };
    }
    if (!signers.has(value.owner) || value.contract !== plan.token || value.callValue !== 0n || value.tokenValue !== 0n) throw new Error(`a contract call by ${value.owner} is not a transfer of the plan's token by a source`);
    const amount = amounts.get(value.owner);
    if (value.data.slice(0, 8) !== 'a9059cbb' || value.data.slice(8, 72) !== transferWord(0n).slice(8, 72)) throw new Error(`the transfer by ${value.owner} does not pay the destination ${plan.destination}`);
    if (value.data !== transferWord(amount) || transferred.has(value.owner)) throw new Error(`the transfer by ${value.owner} moves ${BigInt(`0x${value.data.slice(72) || '0'}`)}, not the planned ${amount}`);
    transferred.add(value.owner);
    total += amount;
    return { tx, owner: value.owner };
  });
  if (transferred.size !== signers.size) throw new Error('a source has no transfer');
  for (const [receiver, left] of delegated) if (left !== 0n) throw new Error(`the energy delegated to ${receiver} is not all taken back`);
  return { checked, signers, total, topUps };
}

/** Signs each checked transaction's txID with its owner's key: a TRON signature is r ‖ s ‖ v. */
export async function signTronPlan(plan, deriveAt, funding) {
  const fundingAddress = tronAddressOf(funding);
  const { checked, signers, total, topUps } = checkTronPlan(plan, deriveAt, fundingAddress);
  const signed = [];
  for (const { tx, owner } of checked) {
    const key = owner === fundingAddress ? funding : signers.get(owner);
    const signature = (await key.sign({ hash: `0x${tx.txID}` })).slice(2);
    const out = { visible: true, txID: tx.txID, raw_data: tx.raw_data, raw_data_hex: tx.raw_data_hex, signature: [signature] };
    signed.push({ kind: tx.kind, from: owner, txID: tx.txID, raw: JSON.stringify(out) });
  }
  return { signed, total, topUps };
}
