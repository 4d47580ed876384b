// What both kinds of sweep plan need in the offline signer (bin/sweep-sign.mjs): refusing the whole
// plan, and checking that every source's path derives its address from the mnemonic.
import { decodeFunctionData, erc20Abi } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';

export function fail(message) {
  process.stderr.write(`sweep:sign refused the plan: ${message}\nNothing was signed or written.\n`);
  process.exit(1);
}

export const lower = (v) => (typeof v === 'string' ? v.toLowerCase() : '');
export const isAddress = (v) => typeof v === 'string' && /^0x[0-9a-f]{40}$/.test(v);

/** Each source's key from its path (refusing a path that derives another address), and its planned amount. */
export function sourceSigners(plan, mnemonic) {
  const signers = new Map();
  const amounts = new Map();
  for (const s of plan.sources) {
    if (typeof s.path !== 'string' || !/^m\/44'\/60'\/\d+'\/[01]\/\d+$/.test(s.path)) fail(`source ${s.address} has no EVM derivation path`);
    const account = mnemonicToAccount(mnemonic, { path: s.path });
    if (lower(account.address) !== lower(s.address)) fail(`${s.path} derives ${account.address}, not ${s.address}: wrong mnemonic or a tampered plan`);
    if (signers.has(lower(s.address))) fail(`source ${s.address} is listed twice`);
    signers.set(lower(s.address), account);
    amounts.set(lower(s.address), BigInt(s.amountMinor));
  }
  return { signers, amounts };
}

/** The amount an ERC-20 call by `from` moves, refusing anything but `transfer(destination, the planned amount)`. */
export function checkedTransfer(data, from, destination, planned) {
  let call;
  try {
    call = decodeFunctionData({ abi: erc20Abi, data });
  } catch {
    fail(`the transfer from ${from} carries data that is no ERC-20 call`);
  }
  if (call.functionName !== 'transfer' || lower(call.args[0]) !== destination) fail(`the transfer from ${from} pays ${call.args[0]}, not the destination ${destination}`);
  if (call.args[1] !== planned) fail(`the transfer from ${from} moves ${call.args[1]}, not the planned ${planned}`);
  return call.args[1];
}
