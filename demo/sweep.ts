import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { formatUnits, parseEther, type Address } from 'viem';
import { erc20Abi } from '../emulators/anvil/token.js';
import { demoChainClients, demoEvmRails, demoRailDecimals, type DemoEvmRail } from './chain.js';
import { apiClient } from './demo.js';
import { demoDestination, demoFunding, demoMnemonic } from './destinations.js';
import { demoDataDir, readDemoState } from './state.js';

/**
 * "Sweep the demo's payments" (docs/demo.md): the USDT the demo's links received sits on their
 * derived addresses; `npm run demo:sweep` plans a sweep to the owner's destination, signs it
 * offline with the demo's test mnemonic through the shipped signer (bin/sweep-sign.mjs, its own
 * process), broadcasts it through the API, and shows the destination holding the total. The demo
 * store's xpubs are this public test mnemonic's ("abandon … about", docs/wallets.md): never a
 * real wallet's.
 */
const run = promisify(execFile);
const signer = fileURLToPath(new URL('../bin/sweep-sign.mjs', import.meta.url));

interface PlanAnswer { id: string; totalToken: string; tokenSymbol: string; plan: { sources: unknown[]; transactions: unknown[] } }

export async function demoSweep(opts: { rail?: string; dataDir?: string }): Promise<void> {
  const dataDir = opts.dataDir ? demoDataDir({ DATA_DIR: opts.dataDir }) : demoDataDir();
  const state = await readDemoState(dataDir);
  if (!state.testKeys || !state.anvilUrl || !state.tokens || !state.payer || !state.apiUrl) {
    throw new Error(`no running demo found in ${dataDir}: start it with npm run demo (or pass --data-dir)`);
  }
  const rail = (opts.rail ?? 'USDT_BSC') as DemoEvmRail;
  if (!demoEvmRails.includes(rail)) throw new Error('--rail must be USDT_BSC, USDT_ETH or USDT_POLYGON');
  const api = apiClient(state.apiUrl);
  const key = state.testKeys.secretKey;
  const { publicClient, walletClient, chain } = demoChainClients(state.anvilUrl);
  const token = state.tokens[rail] as Address;
  const held = () => publicClient.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [demoDestination] });

  // The funding address pays the sources' gas; on the demo chain, the demo's funded account gives it some.
  if ((await publicClient.getBalance({ address: demoFunding })) < parseEther('0.1')) {
    const hash = await walletClient.sendTransaction({ account: state.payer as Address, chain, to: demoFunding, value: parseEther('1') });
    await publicClient.waitForTransactionReceipt({ hash });
  }
  const before = await held();
  const plan = await api.call('POST', '/v1/sweeps', key, { rail, destination: demoDestination, fundingAddress: demoFunding }) as PlanAnswer;
  console.log(`Planned ${plan.id}: ${plan.totalToken} ${plan.tokenSymbol} on ${plan.plan.sources.length} address(es), ${plan.plan.transactions.length} transaction(s) to sign`);

  const planFile = join(dataDir, 'sweep-plan.json');
  const mnemonicFile = join(dataDir, 'demo-mnemonic.txt');
  const signedFile = join(dataDir, 'sweep-plan.signed.json');
  await writeFile(planFile, JSON.stringify(plan, null, 2));
  await writeFile(mnemonicFile, demoMnemonic, { mode: 0o600 });
  const signed = await run(process.execPath, [signer, planFile, '--mnemonic-file', mnemonicFile, '--out', signedFile]);
  console.log(`Signed offline (node bin/sweep-sign.mjs ${planFile} --mnemonic-file ${mnemonicFile}):\n${signed.stdout.trimEnd()}`);

  const body = JSON.parse(await readFile(signedFile, 'utf8')) as { transactions: unknown[] };
  const sent = await api.call('POST', `/v1/sweeps/${plan.id}/broadcast`, key, body) as { transactions: Array<{ status: string }> };
  const after = await held();
  const decimals = demoRailDecimals[rail];
  console.log(`Broadcast ${sent.transactions.length} transaction(s), ${sent.transactions.filter((t) => t.status === 'success').length} succeeded`);
  console.log(`Destination ${demoDestination} holds ${formatUnits(after, decimals)} ${plan.tokenSymbol}: ${formatUnits(after - before, decimals)} more, the total swept ${plan.totalToken}`);
  console.log(`Follow it: curl ${state.apiUrl}/v1/sweeps/${plan.id} -H 'x-api-key: ${key}'`);
}
