import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createPublicClient, createWalletClient, defineChain, http, type Address, type Hash } from 'viem';
import { anvilBinary, compileTestToken, erc20Abi } from '../emulators/anvil/token.js';

/**
 * The demo's local EVM chain: anvil mining a block every second (so confirmation depth is
 * reached by itself), its state kept in `DATA_DIR/anvil-state.json` so a second run finds the
 * same tokens and balances, and one test USDT per EVM rail (BSC 18 decimals, ETH and Polygon 6,
 * as on their mainnets). The rails need distinct contracts: an address is the same on every EVM
 * rail, so a shared token would be counted once per rail.
 */
export type DemoEvmRail = 'USDT_BSC' | 'USDT_ETH' | 'USDT_POLYGON';
export const demoEvmRails: readonly DemoEvmRail[] = ['USDT_BSC', 'USDT_ETH', 'USDT_POLYGON'];
export const demoRailDecimals: Record<DemoEvmRail, number> = { USDT_BSC: 18, USDT_ETH: 6, USDT_POLYGON: 6 };

/** anvil's chain id: the demo sets it as CHAIN_ID_<RAIL>_TEST, so wallet URIs name it and the start-up check finds it. */
export const demoChainId = 31337;

export interface DemoChain {
  url: string;
  tokens: Record<DemoEvmRail, Address>;
  payer: Address;
  stop(): Promise<void>;
}

export function demoChainClients(url: string) {
  const chain = defineChain({ id: demoChainId, name: 'anvil', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [url] } } });
  return {
    chain,
    publicClient: createPublicClient({ chain, transport: http(url), pollingInterval: 100 }),
    walletClient: createWalletClient({ chain, transport: http(url) }),
  };
}

export async function startDemoChain(opts: { dataDir: string; port: number; known?: Partial<Record<DemoEvmRail, string>> }): Promise<DemoChain> {
  const args = [
    '--host', '127.0.0.1', '--port', String(opts.port), '--chain-id', String(demoChainId), '--block-time', '1',
    '--state', join(opts.dataDir, 'anvil-state.json'), '--state-interval', '5', '--preserve-historical-states',
  ];
  const child = spawn(anvilBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await listening(child);
  const url = `http://127.0.0.1:${opts.port}`;
  try {
    const { publicClient, walletClient, chain } = demoChainClients(url);
    const [deployer, payer] = await walletClient.getAddresses();
    const tokens = {} as Record<DemoEvmRail, Address>;
    const missing: DemoEvmRail[] = [];
    for (const rail of demoEvmRails) {
      const known = opts.known?.[rail] as Address | undefined;
      if (known && (await publicClient.getCode({ address: known }))?.length) tokens[rail] = known;
      else missing.push(rail);
    }
    if (missing.length) {
      // Sent together, mined in the next block: about a second for all of them.
      const { abi, bytecode } = compileTestToken();
      const deploys: Hash[] = [];
      for (const rail of missing) deploys.push(await walletClient.deployContract({ abi, bytecode, args: [demoRailDecimals[rail]], account: deployer!, chain }));
      const mints: Hash[] = [];
      for (const [i, rail] of missing.entries()) {
        const receipt = await publicClient.waitForTransactionReceipt({ hash: deploys[i]! });
        if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error(`deploying the ${rail} test USDT failed`);
        tokens[rail] = receipt.contractAddress;
        // A million USDT for the payer.
        mints.push(await walletClient.writeContract({ address: receipt.contractAddress, abi: erc20Abi, functionName: 'mint', args: [payer!, 10n ** BigInt(6 + demoRailDecimals[rail])], account: deployer!, chain }));
      }
      for (const hash of mints) await publicClient.waitForTransactionReceipt({ hash });
    }
    return {
      url,
      tokens,
      payer: payer!,
      async stop() {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT'); // anvil writes its state on SIGINT
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      },
    };
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
}

function listening(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4000);
      if (/Listening on [\d.]+:\d+/.test(output)) resolve();
    };
    // Reading stays on for anvil's whole life: a full pipe would block it.
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`anvil exited (${code}) before listening:\n${output}`)));
  });
}

/** Sends `amountMinor` of a rail's demo token from the funded account; resolves with the mined hash. */
export async function sendDemoUsdt(url: string, token: Address, from: Address, to: Address, amountMinor: bigint): Promise<Hash> {
  const { publicClient, walletClient, chain } = demoChainClients(url);
  const hash = await walletClient.writeContract({ address: token, abi: erc20Abi, functionName: 'transfer', args: [to, amountMinor], account: from, chain });
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error('the USDT transfer reverted');
  return hash;
}
