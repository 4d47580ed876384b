import { encodeFunctionData, erc20Abi, hashTypedData, numberToHex, pad, parseAbi, type Address, type Hex } from 'viem';

/**
 * ERC-4337 v0.8 user operations as a sponsored sweep uses them (docs/treasury.md, "Sponsored
 * plans"): the delegate is eth-infinitism's audited `Simple7702Account` from
 * `@account-abstraction/contracts@0.8.0`, whose `execute` only the account itself or EntryPoint
 * v0.8 may call. Only the interfaces are here: Malipo deploys no contract of its own.
 */
export const entryPointAbi = parseAbi([
  'struct PackedUserOperation { address sender; uint256 nonce; bytes initCode; bytes callData; bytes32 accountGasLimits; uint256 preVerificationGas; bytes32 gasFees; bytes paymasterAndData; bytes signature; }',
  'function handleOps(PackedUserOperation[] ops, address beneficiary)',
  'function getNonce(address sender, uint192 key) view returns (uint256)',
  'event UserOperationEvent(bytes32 indexed userOpHash, address indexed sender, address indexed paymaster, uint256 nonce, bool success, uint256 actualGasCost, uint256 actualGasUsed)',
]);

export const simple7702AccountAbi = parseAbi([
  'function execute(address target, uint256 value, bytes data)',
  'function entryPoint() view returns (address)',
]);

/**
 * The `initCode` that marks an EIP-7702 account to EntryPoint v0.8 (`Eip7702Support.sol`): the op
 * creates nothing, and its hash commits to the delegate the sender's code names, so a signature
 * is good only while the source is delegated to the planned contract.
 */
export const eip7702InitCode: Hex = '0x7702';

/** A user operation as planned: every field but the signature, JSON-ready. */
export interface PlannedUserOp {
  sender: string;
  /** EntryPoint's nonce of the sender (key 0), decimal string. */
  nonce: string;
  initCode: Hex;
  callData: Hex;
  /** verificationGasLimit (high 128 bits) and callGasLimit (low 128 bits). */
  accountGasLimits: Hex;
  preVerificationGas: string;
  /** maxPriorityFeePerGas (high) and maxFeePerGas (low): zero, so the source pays nothing. */
  gasFees: Hex;
  paymasterAndData: Hex;
}

/** Two 128-bit numbers in one bytes32, high first (EntryPoint v0.8's packing). */
export function packUint128s(high: bigint, low: bigint): Hex {
  return pad(numberToHex((high << 128n) | low), { size: 32 });
}

/** The sweep's call: the account moves `amount` of `token` to `destination`, nothing else. */
export function sweepCallData(token: Address, destination: Address, amount: bigint): Hex {
  const transfer = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [destination, amount] });
  return encodeFunctionData({ abi: simple7702AccountAbi, functionName: 'execute', args: [token, 0n, transfer] });
}

/**
 * EntryPoint v0.8's `getUserOpHash`: EIP-712 over the packed op (domain "ERC4337", version "1",
 * the chain, the EntryPoint), with an EIP-7702 op's initCode replaced by its delegate's address,
 * as `Eip7702Support._getEip7702InitCodeHashOverride` hashes it; the offline signer signs the same.
 */
export function userOpHash(op: PlannedUserOp, delegate: Address, entryPoint: Address, chainId: number): Hex {
  return hashTypedData({
    domain: { name: 'ERC4337', version: '1', chainId, verifyingContract: entryPoint },
    types: {
      PackedUserOperation: [
        { name: 'sender', type: 'address' }, { name: 'nonce', type: 'uint256' }, { name: 'initCode', type: 'bytes' },
        { name: 'callData', type: 'bytes' }, { name: 'accountGasLimits', type: 'bytes32' }, { name: 'preVerificationGas', type: 'uint256' },
        { name: 'gasFees', type: 'bytes32' }, { name: 'paymasterAndData', type: 'bytes' },
      ],
    },
    primaryType: 'PackedUserOperation',
    message: {
      sender: op.sender as Address, nonce: BigInt(op.nonce), initCode: op.initCode === eip7702InitCode ? delegate : op.initCode,
      callData: op.callData, accountGasLimits: op.accountGasLimits, preVerificationGas: BigInt(op.preVerificationGas),
      gasFees: op.gasFees, paymasterAndData: op.paymasterAndData,
    },
  });
}

/** A planned op with its signature, as `handleOps` takes it. */
export function toAbiOp(op: PlannedUserOp, signature: Hex) {
  return {
    sender: op.sender as Address, nonce: BigInt(op.nonce), initCode: op.initCode, callData: op.callData, accountGasLimits: op.accountGasLimits,
    preVerificationGas: BigInt(op.preVerificationGas), gasFees: op.gasFees, paymasterAndData: op.paymasterAndData, signature,
  };
}
