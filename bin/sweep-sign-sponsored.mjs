// The offline signer's part for sponsored (EIP-7702) sweep plans (docs/treasury.md, "Sponsored
// plans"). Per source it signs an EIP-7702 authorization delegating the address to the plan's
// delegate (eth-infinitism's Simple7702Account) and an ERC-4337 v0.8 user operation whose only call
// is the source's whole planned amount of the plan's token to the plan's destination, with zero
// fees; then, with the funding key, each type-4 transaction calling EntryPoint's handleOps with
// the sources it carries (50 a transaction).
// It checks all of that first and refuses the whole plan on any difference.
import { decodeFunctionData, encodeFunctionData, keccak256, parseAbi } from 'viem';
import { checkedTransfer, fail, isAddress, lower, sourceSigners } from './sweep-sign-common.mjs';

const entryPointAbi = parseAbi([
  'struct PackedUserOperation { address sender; uint256 nonce; bytes initCode; bytes callData; bytes32 accountGasLimits; uint256 preVerificationGas; bytes32 gasFees; bytes paymasterAndData; bytes signature; }',
  'function handleOps(PackedUserOperation[] ops, address beneficiary)',
]);
const accountAbi = parseAbi(['function execute(address target, uint256 value, bytes data)']);
const zero32 = `0x${'0'.repeat(64)}`;

/** EntryPoint v0.8's userOpHash as EIP-712 typed data; an EIP-7702 op's initCode (0x7702) is hashed as its delegate's address. */
function userOpTypedData(op, plan) {
  return {
    domain: { name: 'ERC4337', version: '1', chainId: plan.chainId, verifyingContract: plan.entryPoint },
    types: {
      PackedUserOperation: [
        { name: 'sender', type: 'address' }, { name: 'nonce', type: 'uint256' }, { name: 'initCode', type: 'bytes' },
        { name: 'callData', type: 'bytes' }, { name: 'accountGasLimits', type: 'bytes32' }, { name: 'preVerificationGas', type: 'uint256' },
        { name: 'gasFees', type: 'bytes32' }, { name: 'paymasterAndData', type: 'bytes' },
      ],
    },
    primaryType: 'PackedUserOperation',
    message: {
      sender: op.sender, nonce: BigInt(op.nonce), initCode: plan.delegate, callData: op.callData, accountGasLimits: op.accountGasLimits,
      preVerificationGas: BigInt(op.preVerificationGas), gasFees: op.gasFees, paymasterAndData: op.paymasterAndData,
    },
  };
}

/** One source's op: its own, zero fees, no paymaster, an EIP-7702 account, and a call that is exactly its planned transfer. */
function checkOp(op, plan, amounts) {
  const sender = lower(op.sender);
  if (!amounts.has(sender)) fail(`a user operation's sender ${op.sender} is not a source`);
  if (op.initCode !== '0x7702' || op.paymasterAndData !== '0x') fail(`the user operation of ${sender} is not a plain EIP-7702 operation`);
  if (lower(op.gasFees) !== zero32) fail(`the user operation of ${sender} would pay fees from the source`);
  if (!/^\d+$/.test(String(op.nonce)) || !/^\d+$/.test(String(op.preVerificationGas)) || !/^0x[0-9a-fA-F]{64}$/.test(op.accountGasLimits)) fail(`the user operation of ${sender} has malformed numbers`);
  let call;
  try {
    call = decodeFunctionData({ abi: accountAbi, data: op.callData });
  } catch {
    fail(`the user operation of ${sender} calls something other than execute`);
  }
  if (lower(call.args[0]) !== lower(plan.token) || call.args[1] !== 0n) fail(`the user operation of ${sender} calls ${call.args[0]}, not the plan's token`);
  return checkedTransfer(call.args[2], sender, lower(plan.destination), amounts.get(sender));
}

/** Checks a sponsored plan; answers its totals and how to sign it (authorizations, ops, then the funding key's transaction). */
export function checkSponsoredPlan(plan, mnemonic, funding) {
  for (const k of ['destination', 'token', 'funding', 'delegate', 'entryPoint']) if (!isAddress(lower(plan[k]))) fail(`the plan names no valid ${k}`);
  if (!Array.isArray(plan.sources) || !Array.isArray(plan.authorizations) || !Array.isArray(plan.userOps)) fail('this is not a sponsored sweep plan');
  const { signers, amounts } = sourceSigners(plan, mnemonic);
  if (lower(funding.address) !== lower(plan.funding)) fail(`the funding key is ${funding.address}, not the plan's funding address ${plan.funding}`);
  if (signers.has(lower(plan.funding))) fail('the funding address is also a source');
  const n = plan.sources.length;
  if (plan.authorizations.length !== n || plan.userOps.length !== n) fail('the plan has not one authorization and one user operation per source');
  let total = 0n;
  plan.sources.forEach((s, i) => {
    const auth = plan.authorizations[i];
    const op = plan.userOps[i];
    if (lower(auth.source) !== lower(s.address) || lower(op.sender) !== lower(s.address)) fail(`the authorization or operation ${i} is not of source ${s.address}`);
    if (auth.chainId !== plan.chainId || lower(auth.address) !== lower(plan.delegate) || !Number.isInteger(auth.nonce) || auth.nonce < 0) fail(`the authorization of ${s.address} is not for the plan's delegate on chain ${plan.chainId}`);
    total += checkOp(op, plan, amounts);
  });
  if (!Array.isArray(plan.transactions) || plan.transactions.length === 0) fail('the plan has no transaction');
  let covered = 0;
  let maxFee = 0n;
  plan.transactions.forEach((tx, i) => {
    if (tx.kind !== 'sponsored' || tx.type !== 'eip7702') fail('a sponsored plan holds only EIP-7702 transactions');
    if (lower(tx.from) !== lower(plan.funding) || lower(tx.to) !== lower(plan.entryPoint) || tx.value !== '0' || tx.chainId !== plan.chainId) fail(`transaction ${i} goes from ${tx.from} to ${tx.to}: only from the funding address to the EntryPoint`);
    if (!Number.isInteger(tx.nonce) || tx.nonce < 0) fail(`transaction ${i} has no valid nonce`);
    // The transactions carry the sources in order, each once.
    if (tx.firstSource !== covered || !Number.isInteger(tx.sourceCount) || tx.sourceCount < 1) fail(`transaction ${i} does not carry the next sources`);
    covered += tx.sourceCount;
    maxFee += BigInt(tx.gas) * BigInt(tx.maxFeePerGas);
  });
  if (covered !== n) fail('the transactions do not carry every source');

  /** Each source's authorization and signed op, in the plan's order. */
  const signSources = async () => {
    const authorizations = [];
    const ops = [];
    for (let i = 0; i < n; i++) {
      const source = signers.get(lower(plan.sources[i].address));
      const auth = plan.authorizations[i];
      authorizations.push(await source.signAuthorization({ chainId: auth.chainId, contractAddress: lower(plan.delegate), nonce: auth.nonce }));
      const op = plan.userOps[i];
      const signature = await source.signTypedData(userOpTypedData(op, plan));
      ops.push({ ...op, nonce: BigInt(op.nonce), preVerificationGas: BigInt(op.preVerificationGas), signature });
    }
    return { authorizations, ops };
  };
  const sign = async () => {
    const { authorizations, ops } = await signSources();
    const signed = [];
    for (const tx of plan.transactions) {
      const end = tx.firstSource + tx.sourceCount;
      const data = encodeFunctionData({ abi: entryPointAbi, functionName: 'handleOps', args: [ops.slice(tx.firstSource, end), lower(plan.funding)] });
      const raw = await funding.signTransaction({
        type: 'eip7702', chainId: plan.chainId, nonce: tx.nonce, gas: BigInt(tx.gas), maxFeePerGas: BigInt(tx.maxFeePerGas),
        maxPriorityFeePerGas: BigInt(tx.maxPriorityFeePerGas), to: lower(plan.entryPoint), value: 0n, data, authorizationList: authorizations.slice(tx.firstSource, end),
      });
      signed.push({ kind: 'sponsored', from: lower(plan.funding), nonce: tx.nonce, hash: keccak256(raw), raw });
    }
    return signed;
  };
  return { total, maxFee, topUps: 0n, sign };
}
