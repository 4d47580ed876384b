import { createRequire } from 'node:module';
import type { Abi, Address, Hex } from 'viem';
import type { Anvil } from './anvil.js';

/**
 * eth-infinitism's EntryPoint v0.8 and Simple7702Account, from the bytecode their npm package
 * ships (`@account-abstraction/contracts@0.8.0`, artifacts/*.json), on anvil: what sponsored sweep
 * plans (docs/treasury.md) need on a chain. Simple7702Account trusts EntryPoint v0.8 at its
 * canonical address (a constant in its code), so the EntryPoint deployed here is placed there
 * with `anvil_setCode` (its immutables come along; its EIP-712 domain follows the address it runs
 * at). The account is deployed where anvil puts it: tests configure its address.
 */
export const entryPointV08: Address = '0x4337084D9E255Ff0702461CF8895CE9E3b5Ff108';

const artifact = (name: string) => createRequire(import.meta.url)(`@account-abstraction/contracts/artifacts/${name}.json`) as { abi: Abi; bytecode: Hex };

async function deploy(anvil: Anvil, name: string): Promise<Address> {
  const { abi, bytecode } = artifact(name);
  const hash = await anvil.walletClient.deployContract({ abi, bytecode, account: anvil.accounts[0]!, chain: anvil.walletClient.chain });
  const receipt = await anvil.publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error(`${name} deployment failed`);
  return receipt.contractAddress;
}

/** Deploys both; answers the delegate's address (Simple7702Account) and the EntryPoint's. */
export async function deployAccountAbstraction(anvil: Anvil): Promise<{ delegate: Address; entryPoint: Address }> {
  const deployed = await deploy(anvil, 'EntryPoint');
  const code = await anvil.publicClient.getCode({ address: deployed });
  await anvil.rpc('anvil_setCode', [entryPointV08, code]);
  const delegate = await deploy(anvil, 'Simple7702Account');
  return { delegate, entryPoint: entryPointV08 };
}
