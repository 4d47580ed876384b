import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toFunctionSelector } from 'viem';
import { tronAddressFromBytes, tronAddressToEvmHex } from '../../rails/tron/address.js';
import { answerJsonRpc, TronChain } from './jsonrpc.js';
import { chainFees, TronAccounts } from './accounts.js';
import { answerMulticall } from './multicall.js';
import { answerBroadcast } from './broadcast.js';
import { triggerTransactionJson } from './transaction.js';

/**
 * A stand-in for TronGrid's `/wallet/triggerconstantcontract` (and the `/walletsolidity/` twin)
 * and, for sweeps, `/wallet/broadcasttransaction` and `/wallet/gettransactioninfobyid`
 * (broadcast.ts; a broadcast transaction is applied when the test mines the next block),
 * serving TRC-20 `balanceOf(address)` from balances held in memory. Request and answer follow
 * java-tron's documented shapes (tronprotocol/documentation-en, smart-contract/
 * triggerconstantcontract.md): `visible` picks base58 or `41…` hex addresses, failures come back
 * as HTTP 200 with `result.code`/`result.message`, a revert as `transaction.ret[0].ret: "FAILED"`.
 */
export interface TronGridEmulator {
  url: string;
  /** Deploys a token at a TRON address (base58); calls to unknown contracts fail as on chain. */
  addToken(contract: string): void;
  setBalance(contract: string, holder: string, amount: bigint): void;
  /** Deploys Multicall3 at a TRON address (base58): `aggregate3` of token and TRX balances (multicall.ts). */
  addMulticall3(address: string): void;
  /** An account's TRX balance, in sun. */
  setTrx(holder: string, sun: bigint): void;
  trxOf(holder: string): bigint;
  /** Stakes `sun` for energy (Stake 2.0) on an account, which it may delegate. */
  stakeForEnergy(holder: string, sun: bigint): void;
  /** Accounts, resources and delegations (accounts.ts). */
  readonly accounts: TronAccounts;
  /** Constant calls answered so far. */
  readonly calls: number;
  /** The chain behind `/jsonrpc` and `/walletsolidity/getnowblock` (TRC-20 transfers, solidified blocks, reorgs). */
  readonly chain: TronChain;
  close(): Promise<void>;
}

const balanceOfSelector = toFunctionSelector('balanceOf(address)').slice(2);
const transferSelector = toFunctionSelector('transfer(address,uint256)').slice(2);
/** A USDT transfer's energy on mainnet before the dynamic energy penalty: to a holder, and to an address holding none. */
export const transferEnergy = (recipientHolds: boolean) => (recipientHolds ? 29_650 : 64_285);

interface CallRequest {
  visible: boolean;
  owner: Buffer;
  contract: Buffer;
  data: Buffer;
}

class RequestFault extends Error {}

function parseAddress(value: unknown, visible: boolean, field: string): Buffer {
  if (typeof value !== 'string' || value === '') throw new RequestFault(`${field} is required`);
  try {
    if (visible) return Buffer.from(`41${tronAddressToEvmHex(value).slice(2)}`, 'hex');
  } catch {
    throw new RequestFault(`Invalid ${field} address ${value}`);
  }
  if (!/^41[0-9a-fA-F]{40}$/.test(value)) throw new RequestFault(`Invalid ${field} address ${value}`);
  return Buffer.from(value, 'hex');
}

function selectorOf(signature: string): string {
  try {
    return toFunctionSelector(signature.replace(/\s/g, '')).slice(2);
  } catch {
    throw new RequestFault(`Invalid function_selector ${signature}`);
  }
}

function parseCall(body: Record<string, unknown>, visibleQuery: boolean): CallRequest {
  const visible = body.visible === true || body.visible === 'true' || visibleQuery;
  const owner = parseAddress(body.owner_address, visible, 'owner_address');
  const contract = parseAddress(body.contract_address, visible, 'contract_address');
  let data: string;
  if (typeof body.data === 'string') {
    data = body.data;
  } else {
    if (typeof body.function_selector !== 'string' || body.function_selector === '') throw new RequestFault('function_selector or data is required');
    data = selectorOf(body.function_selector) + (typeof body.parameter === 'string' ? body.parameter : '');
  }
  if (!/^([0-9a-fA-F]{2})*$/.test(data)) throw new RequestFault('parameter is not hex');
  return { visible, owner, contract, data: Buffer.from(data, 'hex') };
}

export async function startTronGridEmulator(opts: { host?: string; port?: number } = {}): Promise<TronGridEmulator> {
  const balances = new Map<string, Map<string, bigint>>(); // contract 41-hex → holder 41-hex → amount
  const accounts = new TronAccounts(); // keyed by 41-hex
  const multicalls = new Set<string>(); // 41-hex
  let calls = 0;
  let blockNumber = 60_000_000;
  const showAddress = (visible: boolean) => (hex41: Buffer) => (visible ? tronAddressFromBytes(hex41.subarray(1)) : hex41.toString('hex'));
  const text = (visible: boolean, message: string) => (visible ? message : Buffer.from(message).toString('hex'));

  function answer(call: CallRequest): Record<string, unknown> {
    const token = balances.get(call.contract.toString('hex'));
    const multicall = multicalls.has(call.contract.toString('hex'));
    if (!token && !multicall) return { result: { code: 'CONTRACT_VALIDATE_ERROR', message: text(call.visible, 'Smart contract is not exist.') } };
    blockNumber += 1;
    const blockHash = createHash('sha256').update(String(blockNumber)).digest();
    const timestamp = Date.now();
    const transaction = triggerTransactionJson(
      {
        refBlockBytes: Buffer.from((blockNumber & 0xffff).toString(16).padStart(4, '0'), 'hex'),
        refBlockHash: blockHash.subarray(8, 16),
        expiration: timestamp + 60_000,
        timestamp,
        ownerAddress: call.owner,
        contractAddress: call.contract,
        data: call.data,
      },
      call.visible,
      showAddress(call.visible),
    );
    if (multicall) {
      const result = answerMulticall({
        self: `0x${call.contract.subarray(1).toString('hex')}`,
        tokenBalance: (t, holder) => balances.get(`41${t.slice(2)}`)?.get(`41${holder.slice(2)}`) ?? (balances.has(`41${t.slice(2)}`) ? 0n : undefined),
        trxBalance: (holder) => accounts.trxOf(`41${holder.slice(2)}`),
        head: chain.head,
      }, call.data);
      if (result === null) {
        (transaction.ret as object[])[0] = { ret: 'FAILED' };
        return { result: { result: true, message: text(call.visible, 'REVERT opcode executed') }, energy_used: 230, constant_result: [''], transaction };
      }
      return { result: { result: true }, energy_used: 2_000 + 3_000 * Math.floor(call.data.length / 100), constant_result: [result], transaction };
    }
    const selector = call.data.subarray(0, 4).toString('hex');
    if (selector === transferSelector && call.data.length === 68) {
      // What the transfer would do: revert without the balance; USDT's energy, more for a recipient holding none (a new storage slot).
      const from = call.owner.toString('hex');
      const to = `41${call.data.subarray(16, 36).toString('hex')}`;
      const amount = BigInt(`0x${call.data.subarray(36, 68).toString('hex')}`);
      if ((token!.get(from) ?? 0n) < amount) {
        (transaction.ret as object[])[0] = { ret: 'FAILED' };
        return { result: { result: true, message: text(call.visible, 'REVERT opcode executed') }, energy_used: 1_000, constant_result: [''], transaction };
      }
      return { result: { result: true }, energy_used: transferEnergy((token!.get(to) ?? 0n) > 0n), constant_result: ['1'.padStart(64, '0')], transaction };
    }
    if (selector !== balanceOfSelector || call.data.length !== 36) {
      (transaction.ret as object[])[0] = { ret: 'FAILED' };
      return { result: { result: true, message: text(call.visible, 'REVERT opcode executed') }, energy_used: 230, constant_result: [''], transaction };
    }
    const holder = `41${call.data.subarray(16, 36).toString('hex')}`;
    const amount = token!.get(holder) ?? 0n;
    return { result: { result: true }, energy_used: 935, constant_result: [amount.toString(16).padStart(64, '0')], transaction };
  }

  const chain = new TronChain();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://emulator');
    if (req.method === 'POST' && url.pathname === '/jsonrpc') {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answerJsonRpc(chain, body)));
      return;
    }
    if (url.pathname === '/walletsolidity/getnowblock' && (req.method === 'POST' || req.method === 'GET')) {
      for await (const _ of req); // the body (none, or `{}`) asks nothing
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(chain.solidifiedBlockJson()));
      return;
    }
    const read = readRoutes[url.pathname];
    if (read && (req.method === 'POST' || req.method === 'GET')) {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      let reply: unknown;
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
        reply = read(body, body.visible === true || url.searchParams.get('visible') === 'true');
      } catch (err) {
        reply = { Error: `class java.lang.IllegalArgumentException : ${(err as Error).message}` };
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
      return;
    }
    if (req.method !== 'POST' || !/^\/wallet(solidity)?\/triggerconstantcontract$/.test(url.pathname)) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: unknown;
    let reply: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      if (body === null || typeof body !== 'object') throw new RequestFault('body is not a JSON object');
      reply = answer(parseCall(body as Record<string, unknown>, url.searchParams.get('visible') === 'true'));
      calls += 1;
    } catch (err) {
      const kind = err instanceof RequestFault ? 'java.lang.IllegalArgumentException' : 'com.alibaba.fastjson.JSONException';
      reply = { result: { code: 'OTHER_ERROR', message: `${kind} : ${(err as Error).message.replace(/"/g, "'")}` } };
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
  }

  // java-tron's account and chain reads (accounts.ts), by path.
  const who = (body: Record<string, unknown>, field: string, visible: boolean) => parseAddress(body[field], visible, field).toString('hex');
  const readRoutes: Record<string, (body: Record<string, unknown>, visible: boolean) => unknown> = {
    '/wallet/getnowblock': () => chain.headBlockJson(),
    '/wallet/getchainparameters': () => ({ chainParameter: Object.entries(chainFees).map(([key, value]) => ({ key, value })) }),
    '/wallet/getaccount': (body, visible) => accounts.accountJson(who(body, 'address', visible), (a) => showAddress(visible)(Buffer.from(a, 'hex'))),
    '/wallet/getaccountresource': (body, visible) => accounts.resourceJson(who(body, 'address', visible)),
    '/wallet/getcandelegatedmaxsize': (body, visible) => {
      const max = body.type === 1 ? accounts.canDelegateSun(who(body, 'owner_address', visible)) : 0n;
      return max > 0n ? { max_size: Number(max) } : {};
    },
    // Signed transactions (broadcast.ts): checked, pooled, applied by the next mined block.
    '/wallet/broadcasttransaction': (body) => answerBroadcast({ chain, accounts, tokens: balances, transferEnergy }, body),
    '/wallet/gettransactioninfobyid': (body) => chain.txInfoJson(String(body.value ?? '')),
    '/walletsolidity/gettransactioninfobyid': (body) => chain.txInfoJson(String(body.value ?? ''), true),
  };

  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const hex = (address: string) => `41${tronAddressToEvmHex(address).slice(2)}`;
  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}`,
    addToken(contract) {
      if (!balances.has(hex(contract))) balances.set(hex(contract), new Map());
    },
    setBalance(contract, holder, amount) {
      const token = balances.get(hex(contract));
      if (!token) throw new Error(`no token at ${contract}: addToken first`);
      token.set(hex(holder), amount);
    },
    addMulticall3(address) {
      multicalls.add(hex(address));
    },
    setTrx(holder, sun) {
      accounts.setTrx(hex(holder), sun);
    },
    trxOf: (holder) => accounts.trxOf(hex(holder)),
    stakeForEnergy(holder, sun) {
      accounts.stakeForEnergy(hex(holder), sun);
    },
    accounts,
    get calls() {
      return calls;
    },
    chain,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
