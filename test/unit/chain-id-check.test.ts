import { describe, expect, it } from '@jest/globals';
import { railSettingsFrom } from '../../config/rail-settings.js';
import { chainIdStatus, chainIdTargets, describeChainIdStatus, type ChainIdTarget } from '../../rails/evm/chain-id-check.js';
import { isOnWrongChain, recordChainId, usableRailRpcUrls, usableRpcUrls, type ChainIdVerdict } from '../../rails/evm/chain-ids.js';
import { defaultRailSettings } from '../../rails/settings.js';

const keyed = 'https://bsc.example/v1/secret-provider-key';

describe('which RPCs are asked for their chain id', () => {
  it('every EVM rail and environment with a token contract, expecting its public network by default', () => {
    expect(chainIdTargets(defaultRailSettings()).map((t) => [t.rail, t.environment, t.expected, t.urls.length])).toEqual([
      ['USDT_BSC', 'test', 97, 1],
      ['USDT_BSC', 'live', 56, 1],
      ['USDT_ETH', 'test', 11_155_111, 1],
      ['USDT_ETH', 'live', 1, 1],
      // Polygon's testnet has no USDT contract by default: simulated only, its RPC never read.
      ['USDT_POLYGON', 'live', 137, 1],
    ]);
  });

  it('the configured chain id (CHAIN_ID_<RAIL>_<ENV>) and every RPC of a comma-separated list, in order', () => {
    const rails = railSettingsFrom({ RPC_URL_USDT_BSC_TEST: `http://127.0.0.1:8545, ${keyed}`, CHAIN_ID_USDT_BSC_TEST: '31337' });
    expect(chainIdTargets(rails)[0]).toEqual({ rail: 'USDT_BSC', environment: 'test', expected: 31337, urls: ['http://127.0.0.1:8545', keyed] });
  });
});

describe('the verdict on a rail', () => {
  const target: ChainIdTarget = { rail: 'USDT_BSC', environment: 'test', expected: 97, urls: ['http://a', keyed, 'http://c'] };
  const record = (entries: Array<[string, number | undefined]>) => new Map<string, ChainIdVerdict>(entries.map(([url, actual]) => [url, { expected: 97, actual }]));

  it('an RPC on the configured chain is verified; one on another is not used; one not answered yet is used', () => {
    const s = chainIdStatus(target, record([['http://a', 97], [keyed, 31337]]));
    expect(s).toEqual({
      rail: 'USDT_BSC', environment: 'test', expected: 97, usable: 2,
      rpcs: [{ rpc: 1, actual: 97, verdict: 'verified' }, { rpc: 2, actual: 31337, verdict: 'wrong_chain' }, { rpc: 3, actual: null, verdict: 'unanswered' }],
    });
    expect(describeChainIdStatus(s)).toBe(
      'CHAIN_ID_USDT_BSC_TEST is 97: RPC 1 of 3 is on it; RPC 2 of 3 is on chain 31337 and is not used; RPC 3 of 3 has not answered yet (used meanwhile, asked again); 2 of 3 usable.',
    );
  });

  it('no usable RPC when every one is on another chain; the description names positions, never URLs', () => {
    const s = chainIdStatus(target, record([['http://a', 31337], [keyed, 56], ['http://c', 1]]));
    expect(s.usable).toBe(0);
    expect(describeChainIdStatus(s)).not.toMatch(/http|secret|example/);
  });
});

describe('the record the chain readers consult', () => {
  it('leaves out an RPC known to be on another chain, keeps one not answered, in failover order', () => {
    recordChainId('http://wrong', { expected: 97, actual: 31337 });
    recordChainId('http://right', { expected: 97, actual: 97 });
    recordChainId('http://silent', { expected: 97, actual: undefined });
    expect(usableRpcUrls(['http://silent', 'http://wrong', 'http://right', 'http://never-asked'])).toEqual(['http://silent', 'http://right', 'http://never-asked']);
    expect(isOnWrongChain('http://wrong')).toBe(true);
  });

  it('judges a URL shared by two rails against each rail\'s own chain id', () => {
    recordChainId('http://anvil', { expected: 97, actual: 31337 });
    expect(usableRpcUrls(['http://anvil'], 97)).toEqual([]);
    expect(usableRpcUrls(['http://anvil'], 31337)).toEqual(['http://anvil']);
    const rails = railSettingsFrom({ RPC_URL_USDT_BSC_TEST: 'http://anvil', RPC_URL_USDT_ETH_TEST: 'http://anvil', CHAIN_ID_USDT_ETH_TEST: '31337' });
    expect(usableRailRpcUrls(rails, 'USDT_BSC', 'test')).toEqual([]);
    expect(usableRailRpcUrls(rails, 'USDT_ETH', 'test')).toEqual(['http://anvil']);
    // Rails without a chain id (TRON, Solana) keep every RPC.
    expect(usableRailRpcUrls(rails, 'USDT_TRON', 'test')).toEqual(['https://nile.trongrid.io']);
  });
});
