import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { EvmReadError, readErc20Balance } from '../../rails/evm/client.js';
import { readTrc20Balance, TronReadError } from '../../rails/tron/client.js';
import { tronAddressFromBytes } from '../../rails/tron/address.js';
import { startTronGridEmulator, type TronGridEmulator } from '../../emulators/trongrid/server.js';
import { encodeTriggerRaw } from '../../emulators/trongrid/transaction.js';
import { loadConfig } from '../../config/config.js';
import { railEndpointProblems } from '../../config/rail-settings.js';
import { railEndpoint } from '../../rails/settings.js';
import { deployTestToken, startAnvil, type Anvil } from '../helpers/anvil.js';

/**
 * The chain read paths the API and the watchers share, and the fidelity of the TronGrid
 * emulator to the documented wire format (tronprotocol/documentation-en,
 * docs/api/http/smart-contract/triggerconstantcontract.md, "real Nile capture").
 */
const docOwner = '41dd791d6b49e190062d650e6a23c575510d35f2f9';
const docContract = '41eca9bc828a3005b9a3b909f2cc5c2a54794de05f';
const docParameter = '000000000000000000000000dd791d6b49e190062d650e6a23c575510d35f2f9';
const docRawDataHex =
  '0a0228c022089eabbe133123b34c40d0d6f0c0dd335a8e01081f1289010a31747970652e676f6f676c65617069732e636f6d2f70726f746f636f6c2e54726967676572536d617274436f6e747261637412540a1541dd791d6b49e190062d650e6a23c575510d35f2f9121541eca9bc828a3005b9a3b909f2cc5c2a54794de05f222470a08231000000000000000000000000dd791d6b49e190062d650e6a23c575510d35f2f970cb97edc0dd33';
const base58 = (hex41: string) => tronAddressFromBytes(Buffer.from(hex41.slice(2), 'hex'));

let trongrid: TronGridEmulator;
let anvil: Anvil;
beforeAll(async () => {
  trongrid = await startTronGridEmulator();
  anvil = await startAnvil();
});
afterAll(async () => {
  await trongrid?.close();
  await anvil?.stop();
});

async function postRaw(path: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${trongrid.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json() };
}

describe('TronGrid emulator fidelity', () => {
  it("encodes the documented Nile capture's transaction byte for byte, with its txID", () => {
    const raw = encodeTriggerRaw({
      refBlockBytes: Buffer.from('28c0', 'hex'),
      refBlockHash: Buffer.from('9eabbe133123b34c', 'hex'),
      expiration: 1777447218000,
      timestamp: 1777447160779,
      ownerAddress: Buffer.from(docOwner, 'hex'),
      contractAddress: Buffer.from(docContract, 'hex'),
      data: Buffer.from(`70a08231${docParameter}`, 'hex'),
    });
    expect(raw.toString('hex')).toBe(docRawDataHex);
    expect(createHash('sha256').update(raw).digest('hex')).toBe('cff6488e738ce77f7325572fe0aa2470f87dbf1c95eeeb2c25feec59d5afa35c');
  });

  it('answers the documented request (hex addresses) with the documented response shape', async () => {
    trongrid.addToken(base58(docContract));
    trongrid.setBalance(base58(docContract), base58(docOwner), 0x40cfcc00n);
    const body = { owner_address: docOwner, contract_address: docContract, function_selector: 'balanceOf(address)', parameter: docParameter };
    const { status, json } = await postRaw('/wallet/triggerconstantcontract', body);
    expect(status).toBe(200);
    expect(Object.keys(json)).toEqual(['result', 'energy_used', 'constant_result', 'transaction']);
    expect(json.result).toEqual({ result: true });
    expect(json.constant_result).toEqual(['0000000000000000000000000000000000000000000000000000000040cfcc00']);
    expect(json.transaction).toMatchObject({
      ret: [{}],
      visible: false,
      raw_data: {
        contract: [{
          parameter: { value: { data: `70a08231${docParameter}`, owner_address: docOwner, contract_address: docContract }, type_url: 'type.googleapis.com/protocol.TriggerSmartContract' },
          type: 'TriggerSmartContract',
        }],
      },
    });
    const raw = Buffer.from(json.transaction.raw_data_hex, 'hex');
    expect(json.transaction.txID).toBe(createHash('sha256').update(raw).digest('hex'));
    expect(json.transaction.raw_data_hex).toContain(`0a15${docOwner}1215${docContract}2224`);
    // The solidity-node twin answers the same way.
    expect((await postRaw('/walletsolidity/triggerconstantcontract', body)).json.constant_result).toEqual(json.constant_result);
  });

  it('reports a missing contract, a revert and a malformed request as java-tron does', async () => {
    const missing = await postRaw('/wallet/triggerconstantcontract', { owner_address: docOwner, contract_address: `41${'ab'.repeat(20)}`, function_selector: 'balanceOf(address)', parameter: docParameter });
    expect(missing.json).toEqual({ result: { code: 'CONTRACT_VALIDATE_ERROR', message: Buffer.from('Smart contract is not exist.').toString('hex') } });
    const visible = await postRaw('/wallet/triggerconstantcontract', { owner_address: base58(docOwner), contract_address: base58(`41${'ab'.repeat(20)}`), function_selector: 'balanceOf(address)', parameter: docParameter, visible: true });
    expect(visible.json.result.message).toBe('Smart contract is not exist.');
    const revert = await postRaw('/wallet/triggerconstantcontract', { owner_address: docOwner, contract_address: docContract, function_selector: 'mint(address,uint256)', parameter: docParameter });
    expect(revert.json.result).toEqual({ result: true, message: Buffer.from('REVERT opcode executed').toString('hex') });
    expect(revert.json.transaction.ret).toEqual([{ ret: 'FAILED' }]);
    const malformed = await postRaw('/wallet/triggerconstantcontract', { contract_address: docContract });
    expect(malformed.json.result.code).toBe('OTHER_ERROR');
    expect((await fetch(`${trongrid.url}/wallet/nosuchthing`, { method: 'POST', body: '{}' })).status).toBe(404);
  });
});

describe('TRON client (readTrc20Balance)', () => {
  it('reads a balance with visible:true base58 addresses', async () => {
    expect(await readTrc20Balance(trongrid.url, base58(docContract), base58(docOwner))).toBe(0x40cfcc00n);
  });

  it('turns every failure shape into a TronReadError, never a zero', async () => {
    const holder = base58(docOwner);
    await expect(readTrc20Balance(trongrid.url, base58(`41${'cd'.repeat(20)}`), holder)).rejects.toThrow(/CONTRACT_VALIDATE_ERROR \(Smart contract is not exist\.\)/);
    await expect(readTrc20Balance(`${trongrid.url}/nothing-here`, base58(docContract), holder)).rejects.toThrow(/answered HTTP 404/);
    const closed = await startTronGridEmulator();
    await closed.close();
    const err = await readTrc20Balance(closed.url, base58(docContract), holder).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TronReadError);
    expect((err as Error).message).toMatch(/unreachable/);
  });
});

describe('EVM client (readErc20Balance) on anvil', () => {
  it('reads balanceOf and refuses a contract that answers nothing, without leaking the URL', async () => {
    const token = await deployTestToken(anvil, { decimals: 18 });
    await token.mint(anvil.accounts[2]!, 7n);
    expect(await readErc20Balance(anvil.url, token.address, anvil.accounts[2]!)).toBe(7n);
    const err = await readErc20Balance(anvil.url, anvil.accounts[3]!, anvil.accounts[2]!).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EvmReadError);
    expect((err as Error).message).toMatch(/returned no data/);
    expect((err as Error).message).not.toContain(anvil.url);
  });
});

describe('rail endpoints configuration', () => {
  it('uses public testnet defaults for test keys and mainnet for live', () => {
    const config = loadConfig({});
    expect(railEndpoint(config.rails, 'USDT_BSC', 'test')).toEqual({
      rpcUrl: 'https://bsc-testnet-dataseed.bnbchain.org', rpcUrls: ['https://bsc-testnet-dataseed.bnbchain.org'], usdtContract: '0x337610d27c682E347C9cD60BD4b3b107C9d34dDd', chainId: 97,
      // EIP-7702 sponsored sweeps (docs/treasury.md): eth-infinitism's Simple7702Account, the same address on every chain.
      sweepDelegate: '0xe6Cae83BdE06E4c305530e199D7217f42808555B',
    });
    expect(railEndpoint(config.rails, 'USDT_BSC', 'live')).toEqual({
      rpcUrl: 'https://bsc-dataseed.bnbchain.org', rpcUrls: ['https://bsc-dataseed.bnbchain.org'], usdtContract: '0x55d398326f99059fF775485246999027B3197955', chainId: 56,
      sweepDelegate: '0xe6Cae83BdE06E4c305530e199D7217f42808555B',
    });
    expect(railEndpoint(config.rails, 'USDT_TRON', 'test')).toEqual({ rpcUrl: 'https://nile.trongrid.io', rpcUrls: ['https://nile.trongrid.io'], usdtContract: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf', chainId: undefined });
    expect(railEndpoint(config.rails, 'USDT_TRON', 'live')).toEqual({ rpcUrl: 'https://api.trongrid.io', rpcUrls: ['https://api.trongrid.io'], usdtContract: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', chainId: undefined });
  });

  it('takes RPC_URL_<RAIL>_<ENV> and USDT_CONTRACT_<RAIL>_<ENV> overrides', () => {
    const config = loadConfig({ RPC_URL_USDT_BSC_TEST: 'http://127.0.0.1:8545', USDT_CONTRACT_USDT_TRON_LIVE: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf' });
    expect(railEndpoint(config.rails, 'USDT_BSC', 'test').rpcUrl).toBe('http://127.0.0.1:8545');
    expect(railEndpoint(config.rails, 'USDT_BSC', 'live').rpcUrl).toBe('https://bsc-dataseed.bnbchain.org');
    expect(railEndpoint(config.rails, 'USDT_TRON', 'live').usdtContract).toBe('TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf');
  });

  it('takes a comma-separated RPC list in failover order, and CHAIN_ID_<RAIL>_<ENV>', () => {
    const config = loadConfig({ RPC_URL_USDT_ETH_TEST: ' http://127.0.0.1:8545 , https://b.example/key ', CHAIN_ID_USDT_ETH_TEST: '31337' });
    expect(railEndpoint(config.rails, 'USDT_ETH', 'test')).toMatchObject({
      rpcUrl: 'http://127.0.0.1:8545', rpcUrls: ['http://127.0.0.1:8545', 'https://b.example/key'], chainId: 31337,
    });
    expect(railEndpoint(config.rails, 'USDT_ETH', 'live').chainId).toBe(1);
  });

  it('reports misspelt names and malformed values at boot, without echoing URLs', () => {
    const problems = railEndpointProblems({
      RPC_URL_BSC_TEST: 'http://x',
      RPC_URL_USDT_ETH_LIVE: 'not a url with secret-key',
      USDT_CONTRACT_USDT_TRON_TEST: '0x55d398326f99059fF775485246999027B3197955',
      USDT_CONTRACT_USDT_BSC_LIVE: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
      CONFIRMATIONS_USDT_ETH: '3',
      RPC_URL_USDT_BSC_TEST: 'http://a.example, http://a.example',
      RPC_URL_USDT_POLYGON_LIVE: 'http://a.example,,ftp://b.example',
      RPC_URL_USDT_ETH_TEST: 'http://1.example,http://2.example,http://3.example,http://4.example,http://5.example,http://6.example',
      CHAIN_ID_USDT_TRON_TEST: '1',
      CHAIN_ID_USDT_BSC_LIVE: '0x38',
      CHAIN_ID_USDT_ETH_LIVE: '0',
    });
    expect(problems).toEqual([
      'RPC_URL_BSC_TEST: unknown setting; the pattern is RPC_URL_<RAIL>_<ENV>, USDT_CONTRACT_<RAIL>_<ENV> or CHAIN_ID_<RAIL>_<ENV>, e.g. RPC_URL_USDT_BSC_TEST',
      'RPC_URL_USDT_ETH_LIVE: must be an http(s) or ws(s) URL, or several separated by commas',
      'USDT_CONTRACT_USDT_TRON_TEST: must be a TRON base58 address (T…)',
      'USDT_CONTRACT_USDT_BSC_LIVE: must be an EVM address (0x and 40 hex digits)',
      'RPC_URL_USDT_BSC_TEST: lists the same URL twice',
      'RPC_URL_USDT_POLYGON_LIVE: must be an http(s) or ws(s) URL, or several separated by commas',
      'RPC_URL_USDT_ETH_TEST: at most 5 RPC URLs per rail',
      'CHAIN_ID_USDT_TRON_TEST: only the EVM rails (BSC, Ethereum, Polygon) take a chain id',
      'CHAIN_ID_USDT_BSC_LIVE: must be a positive whole number (an EIP-155 chain id)',
      'CHAIN_ID_USDT_ETH_LIVE: must be a positive whole number (an EIP-155 chain id)',
    ]);
    expect(problems.join('\n')).not.toContain('example');
    expect(() => loadConfig({ RPC_URL_USDT_TRON_TESTNET: 'http://x' })).toThrow(/RPC_URL_USDT_TRON_TESTNET: unknown setting/);
  });
});
