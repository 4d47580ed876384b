import { spawn, type ChildProcess } from 'node:child_process';
import { anvilBinary, compileTestToken } from '../../emulators/anvil/token.js';
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  http,
  type Address,
  type Hash,
  type PublicClient,
  type WalletClient,
} from 'viem';

/**
 * A real local EVM chain for tests: anvil (from the npm package `@foundry-rs/anvil-linux-amd64`,
 * or `ANVIL_PATH`) on a free port, and a USDT-like ERC-20 compiled in-process with solc-js and
 * deployed by the test. Anvil mines each transaction as it arrives, so a mined receipt is there
 * as soon as `send` returns; `anvil_mine`, `anvil_reorg` and the `finalized` tag work as on a
 * node (see research/chains.md §3 and §5).
 */
export { anvilBinary, compileTestToken };

export interface Anvil {
  url: string;
  chainId: number;
  /** anvil's ten pre-funded, unlocked accounts (eth_accounts). */
  accounts: Address[];
  publicClient: PublicClient;
  walletClient: WalletClient;
  /** Raw JSON-RPC, for anvil_* methods. */
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  stop(): Promise<void>;
}

function waitForPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4000);
      const m = /Listening on [\d.]+:(\d+)/.exec(output);
      if (m) resolve(Number(m[1]));
    };
    // Reading stays on for anvil's whole life: a full stdout pipe would block it.
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`anvil exited (${code}) before listening:\n${output}`)));
  });
}

/** anvil's own chain id, which tests' anvils keep unless they ask for another. */
export const anvilChainId = 31337;

/** `hardfork` names the EVM rules (anvil's latest by default); `prague` is the first with EIP-7702. */
export async function startAnvil(opts: { chainId?: number; hardfork?: string } = {}): Promise<Anvil> {
  const chainId = opts.chainId ?? anvilChainId;
  const args = ['--host', '127.0.0.1', '--port', '0', '--chain-id', String(chainId), ...(opts.hardfork ? ['--hardfork', opts.hardfork] : [])];
  const child = spawn(anvilBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const port = await waitForPort(child);
  const url = `http://127.0.0.1:${port}`;
  const chain = defineChain({ id: chainId, name: 'anvil', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [url] } } });
  const publicClient = createPublicClient({ chain, transport: http(url), pollingInterval: 50 }) as PublicClient;
  const walletClient = createWalletClient({ chain, transport: http(url), pollingInterval: 50 });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url,
    chainId,
    accounts: await walletClient.getAddresses(),
    publicClient,
    walletClient,
    rpc: (method, params = []) => publicClient.request({ method: method as never, params: params as never }),
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface TestToken {
  address: Address;
  decimals: number;
  mint(to: Address, amount: bigint): Promise<Hash>;
  /** Sends from one of anvil's unlocked accounts. */
  transfer(from: Address, to: Address, amount: bigint): Promise<Hash>;
  balanceOf(holder: Address): Promise<bigint>;
}

/** Deploys the test token; each write waits for its (instantly mined) receipt and fails on revert. */
export async function deployTestToken(anvil: Anvil, opts: { decimals?: number } = {}): Promise<TestToken> {
  const { abi, bytecode } = compileTestToken();
  const decimals = opts.decimals ?? 18;
  const deployer = anvil.accounts[0]!;
  const deployHash = await anvil.walletClient.deployContract({ abi, bytecode, args: [decimals], account: deployer, chain: anvil.walletClient.chain });
  const receipt = await anvil.publicClient.waitForTransactionReceipt({ hash: deployHash });
  if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error('test token deployment failed');
  const address = receipt.contractAddress;
  const write = async (account: Address, functionName: string, args: unknown[]): Promise<Hash> => {
    const hash = await anvil.walletClient.writeContract({ address, abi, functionName, args, account, chain: anvil.walletClient.chain } as never);
    const r = await anvil.publicClient.waitForTransactionReceipt({ hash });
    if (r.status !== 'success') throw new Error(`${functionName} reverted`);
    return hash;
  };
  return {
    address,
    decimals,
    mint: (to, amount) => write(deployer, 'mint', [to, amount]),
    transfer: (from, to, amount) => write(from, 'transfer', [to, amount]),
    balanceOf: (holder) => anvil.publicClient.readContract({ address, abi, functionName: 'balanceOf', args: [holder] }) as Promise<bigint>,
  };
}

/**
 * Mines a block every `intervalMs` in the background, as a real chain keeps producing blocks, so
 * deposits reach their depth without the test mining them. `stop()` ends it after the block in flight.
 */
export function keepMining(anvil: Pick<Anvil, 'rpc'>, intervalMs: number): { stop(): Promise<void> } {
  let mining = true;
  const loop = (async () => {
    while (mining) {
      await anvil.rpc('anvil_mine', ['0x1']).catch(() => undefined);
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  })();
  return {
    async stop() {
      mining = false;
      await loop;
    },
  };
}
