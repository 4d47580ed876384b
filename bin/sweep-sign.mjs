#!/usr/bin/env node
// The offline sweep signer (docs/treasury.md): signs a plan from POST /v1/sweeps with the
// merchant's mnemonic, on the merchant's machine. It makes no network request (it imports no
// network code; test/unit/sweep-signer.test.ts runs it with sockets forbidden), and the service
// never imports it (the same test checks api/, worker/, services/, activities/).
//
//   npm run sweep:sign -- plan.json --mnemonic-file F [--funding-path "m/44'/60'/0'/0/0" | --funding-key-file K] [--out signed.json]
//   (a TRON plan: the funding path defaults to m/44'/195'/0'/0/0; bin/sweep-sign-tron.mjs checks and signs it)
//
// It checks, before signing anything, that every source's path derives the source's address from
// the mnemonic, that the funding key is the plan's funding address, and that every transaction is
// what a sweep plan may hold (a top-up from the funding address to a source; a transfer of the
// source's whole amount of the plan's token to the plan's destination; for a sponsored plan,
// bin/sweep-sign-sponsored.mjs: each source's EIP-7702 authorization of the plan's delegate and its
// user operation moving exactly that). Any difference refuses the whole plan and writes nothing. Then it prints the destination, the totals and the cost,
// and writes the signed transactions.
import { readFileSync, writeFileSync } from 'node:fs';
import { formatUnits, keccak256 } from 'viem';
import { mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { checkedTransfer, fail, isAddress, lower, sourceSigners } from './sweep-sign-common.mjs';
import { checkSponsoredPlan } from './sweep-sign-sponsored.mjs';
import { signTronPlan } from './sweep-sign-tron.mjs';

function parseArgs(argv) {
  const out = { plan: undefined, mnemonicFile: undefined, fundingPath: undefined, fundingKeyFile: undefined, out: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--mnemonic-file') out.mnemonicFile = argv[++i];
    else if (a === '--funding-path') out.fundingPath = argv[++i];
    else if (a === '--funding-key-file') out.fundingKeyFile = argv[++i];
    else if (a === '--out') out.out = argv[++i];
    else if (!a.startsWith('--') && out.plan === undefined) out.plan = a;
    else fail(`unknown argument ${a}`);
  }
  if (!out.plan || !out.mnemonicFile) fail('usage: sweep:sign plan.json --mnemonic-file F [--funding-path P | --funding-key-file K] [--out signed.json]');
  return out;
}

/** A top-up plan: every transaction checked against what such a plan may hold, then each signed by its key. */
function checkTopUpPlan(plan, mnemonic, funding) {
  if (!plan || !Array.isArray(plan.sources) || !Array.isArray(plan.transactions)) fail('this is not a sweep plan (no sources or transactions)');
  const destination = lower(plan.destination);
  const token = lower(plan.token);
  if (!isAddress(destination) || !isAddress(token) || !isAddress(lower(plan.funding))) fail('the plan names no valid destination, token or funding address');
  // Every path must derive its address from this mnemonic.
  const { signers, amounts } = sourceSigners(plan, mnemonic);
  if (lower(funding.address) !== lower(plan.funding)) fail(`the funding key is ${funding.address}, not the plan's funding address ${plan.funding}`);
  const chainId = plan.chainId;
  let total = 0n;
  let maxFee = 0n;
  let topUps = 0n;
  const transferred = new Set();
  const checked = plan.transactions.map((tx) => {
    if (tx.chainId !== chainId || tx.type !== 'eip1559') fail(`a transaction is for chain ${tx.chainId}, not the plan's ${chainId}`);
    const fields = {
      type: 'eip1559', chainId, nonce: tx.nonce, gas: BigInt(tx.gas), maxFeePerGas: BigInt(tx.maxFeePerGas),
      maxPriorityFeePerGas: BigInt(tx.maxPriorityFeePerGas), to: lower(tx.to), value: BigInt(tx.value), data: tx.data,
    };
    if (!Number.isInteger(fields.nonce) || fields.nonce < 0) fail('a transaction has no valid nonce');
    maxFee += fields.gas * fields.maxFeePerGas;
    if (tx.kind === 'top_up') {
      if (lower(tx.from) !== lower(plan.funding) || !signers.has(fields.to) || fields.data !== '0x') fail(`a top-up goes from ${tx.from} to ${tx.to}: only from the funding address to a source`);
      topUps += fields.value;
      return { tx, fields, signer: funding };
    }
    if (tx.kind !== 'transfer') fail(`a transaction of kind ${tx.kind}`);
    const from = lower(tx.from);
    if (!signers.has(from) || fields.to !== token || fields.value !== 0n) fail(`a transfer from ${tx.from} to ${tx.to} is not a transfer of the plan's token by a source`);
    if (transferred.has(from)) fail(`the transfer from ${tx.from} is planned twice`);
    total += checkedTransfer(fields.data, from, destination, amounts.get(from));
    transferred.add(from);
    return { tx, fields, signer: signers.get(from) };
  });
  if (transferred.size !== signers.size) fail('a source has no transfer');
  const sign = async () => {
    const signed = [];
    for (const { tx, fields, signer } of checked) {
      const raw = await signer.signTransaction(fields);
      signed.push({ kind: tx.kind, from: lower(tx.from), nonce: tx.nonce, hash: keccak256(raw), raw });
    }
    return signed;
  };
  return { total, maxFee, topUps, sign };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const answer = JSON.parse(readFileSync(args.plan, 'utf8'));
  const mnemonic = readFileSync(args.mnemonicFile, 'utf8').trim().split(/\s+/).join(' ');
  // Plans whose transactions are signed by their txID (raw_data_hex and txID: TRON's) go to
  // bin/sweep-sign-tron.mjs; the funding key by default is the mnemonic's first receive address there.
  const tron = typeof (answer.plan ?? answer)?.transactions?.[0]?.raw_data_hex === 'string';
  const funding = args.fundingKeyFile
    ? privateKeyToAccount(readFileSync(args.fundingKeyFile, 'utf8').trim())
    : mnemonicToAccount(mnemonic, { path: args.fundingPath ?? (tron ? "m/44'/195'/0'/0/0" : "m/44'/60'/0'/0/0") });
  if (tron) return signTron(args, answer, mnemonic, funding);
  const plan = answer.plan ?? answer;
  const { total, maxFee, topUps, sign } = plan?.kind === 'sponsored' ? checkSponsoredPlan(plan, mnemonic, funding) : checkTopUpPlan(plan, mnemonic, funding);
  const signed = await sign();
  const out = args.out ?? args.plan.replace(/\.json$/, '') + '.signed.json';
  writeFileSync(out, JSON.stringify({ planId: answer.id ?? null, chainId: plan.chainId, transactions: signed }, null, 2));
  process.stdout.write(
    [
      `kind         ${plan.kind === 'sponsored' ? `sponsored: ${plan.transactions.length} EIP-7702 transaction(s) from ${plan.funding}, delegate ${plan.delegate}, no top-ups` : 'top-ups, then one transfer per source'}`,
      `destination  ${plan.destination}`,
      `token        ${plan.token} on chain ${plan.chainId}`,
      `sources      ${plan.sources.length}, moving ${total} (smallest unit)${answer.totalToken ? ` = ${answer.totalToken} ${answer.tokenSymbol ?? ''}` : ''}`,
      `top-ups      ${formatUnits(topUps, 18)} from ${plan.funding}`,
      // The USD figure is the service's (at its price when it planned); the signer checks the amounts, not prices.
      `max fees     ${formatUnits(maxFee, 18)}${typeof answer.cost?.usd === 'string' ? ` (at most ${answer.cost.usd} USD at ${answer.cost.usdPrice} per coin, the plan's price)` : ''}`,
      `signed       ${signed.length} transactions -> ${out}`,
      '',
    ].join('\n'),
  );
}

/** TRON plans (bin/sweep-sign-tron.mjs): every raw_data_hex decoded and checked, each txID signed. */
async function signTron(args, answer, mnemonic, funding) {
  const plan = answer.plan ?? answer;
  if (!Array.isArray(plan.sources) || !Array.isArray(plan.transactions)) fail('this is not a sweep plan (no sources or transactions)');
  let result;
  try {
    result = await signTronPlan(plan, (path) => mnemonicToAccount(mnemonic, { path }), funding);
  } catch (err) {
    fail(err.message);
  }
  const out = args.out ?? args.plan.replace(/\.json$/, '') + '.signed.json';
  writeFileSync(out, JSON.stringify({ planId: answer.id ?? null, network: 'tron', transactions: result.signed }, null, 2));
  process.stdout.write(
    [
      `destination  ${plan.destination}`,
      `token        ${plan.token} on TRON (${plan.kind})`,
      `sources      ${plan.sources.length}, moving ${result.total} (smallest unit)${answer.totalToken ? ` = ${answer.totalToken} ${answer.tokenSymbol ?? ''}` : ''}`,
      `top-ups      ${formatUnits(result.topUps, 6)} TRX from ${plan.funding}`,
      `TRX burned   at most ${formatUnits(BigInt(plan.trxBurnedSun), 6)}`,
      `signed       ${result.signed.length} transactions -> ${out}`,
      '',
    ].join('\n'),
  );
}

await main();
