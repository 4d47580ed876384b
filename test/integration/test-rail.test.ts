import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { getAddress, type Address } from 'viem';
import type { CreatedStore } from '../../db/store-repo.js';
import { linkBranch } from '../../domain/hd/derive.js';
import { deriveAddress } from '../../rails/chain/derive-address.js';
import { registerRail } from '../../rails/register.js';
import { deployTestToken, startAnvil, type Anvil, type TestToken } from '../helpers/anvil.js';
import { randomAccountXpubs } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';
import { encryptionEnv, loopbackWebhooks } from '../helpers/webhook-harness.js';
import { verifyWebhook, WebhookReceiver } from '../helpers/webhook-receiver.js';
import { fakeEvmRail } from '../rails/fake-evm/index.js';

/**
 * A rail registered at boot (issue 28): the test-only `fake-evm` family of test/rails/fake-evm/,
 * added by this file as a composition root would, before the stack reads its configuration. No
 * product file names it. It is paid end to end like a built-in rail: the API lists it and creates
 * a link on it, the checkout shows its address and EIP-681 URI, its watcher (the EVM scanner on
 * its own RPC and token, on anvil) finds the transfer, the link workflow confirms it from its
 * start input's terms (the workflow's sandbox never heard of the rail), and the store's endpoint
 * receives the signed `payment_link.confirmed`.
 */
const rail = registerRail(fakeEvmRail);

let anvil: Anvil;
let token: TestToken;
let stack: Stack;
let store: CreatedStore;
let receiver: WebhookReceiver;
let key: string;
let payer: Address;
const xpub = randomAccountXpubs().evm;

beforeAll(async () => {
  anvil = await startAnvil();
  token = await deployTestToken(anvil, { decimals: 6 });
  payer = anvil.accounts[1]!;
  await token.mint(payer, 10n ** 12n);
  stack = await startStack({
    CHAIN_WATCHERS: 'on',
    CHAIN_POLL_MS: '100',
    RPC_URL_USDT_FAKE_TEST: anvil.url,
    USDT_CONTRACT_USDT_FAKE_TEST: token.address,
    CONFIRMATIONS_USDT_FAKE: '2',
    ...loopbackWebhooks,
    ...encryptionEnv(),
  });
  receiver = await WebhookReceiver.start();
  store = await stack.createStore('Fake chain shop');
  key = store.keys.test.secretKey;
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await receiver?.down();
  await anvil?.stop();
});

describe('a rail registered at boot', () => {
  it('is refused once the process has read its configuration', () => {
    expect(() => registerRail({ ...fakeEvmRail, facts: { ...fakeEvmRail.facts, id: 'USDT_LATE' } })).toThrow(/sealed/);
  });

  it('is listed, made available by the EVM xpub, and still leaves unknown rails refused', async () => {
    const chains = await stack.request({ method: 'GET', url: '/v1/chains' });
    expect(chains.body.chains.map((c: { network: string }) => c.network)).toContain(rail);
    expect(chains.body.chains.find((c: { network: string }) => c.network === rail)).toMatchObject({ displayName: 'Fake Chain', tokenSymbol: 'USDT', tokenStandard: 'FAKE20' });

    const before = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '1', enabledRails: [rail] } });
    expect(before.status).toBe(400);
    expect(before.body.error.code).toBe('rail_not_available');

    const wallet = await stack.request({ method: 'PUT', url: `/v1/merchant/clients/${store.clientId}/wallets/evm`, payload: { xpub }, key });
    expect(wallet.status).toBe(200);
    expect(wallet.body.rails).toEqual(expect.arrayContaining(['USDT_BSC', rail]));

    const unknown = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '1', enabledRails: ['USDT_NOPE'] } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'invalid_field', param: 'enabledRails.0' });
    expect(unknown.body.error.message).toContain(`"${rail}"`);
  });

  it('pays a link end to end: creation, checkout, watching, confirmation, signed webhook', async () => {
    const ep = (await stack.request({ method: 'POST', url: '/v1/webhook-endpoints', key, payload: { url: receiver.url('/fake') } })).body;
    const created = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '12.5', enabledRails: [rail], merchantRef: 'fake-1' } });
    expect(created.status).toBe(201);
    const link = created.body;
    expect(link).toMatchObject({ enabledRails: [rail], simulatedOnlyRails: [], status: 'PENDING' });

    // The checkout shows the link's address on the store's EVM key and an EIP-681 URI on the rail's chain and token.
    const page = await stack.request({ method: 'GET', url: `/p/${link.id}` });
    expect(page.status).toBe(200);
    const html = String(page.body);
    expect(html).toContain(`data-testid="pay-${rail}"`);
    const address = /data-testid="address">([^<]+)</.exec(html)?.[1];
    expect(address).toBe(deriveAddress(xpub, 'evm', linkBranch, 0));
    const uri = `ethereum:${token.address}@31337/transfer?address=${address}&amp;uint256=12500000`;
    expect(html).toContain(`href="${uri}"`);

    const tx = await token.transfer(payer, address as Address, 12_500_000n);
    await anvil.rpc('anvil_mine', ['0x2']);
    const done = await eventually(async () => {
      const l = (await stack.request({ method: 'GET', url: `/v1/payment-links/${link.id}`, key })).body;
      return l.status === 'CONFIRMED' ? l : undefined;
    }, 'the fake-chain link CONFIRMED', 60_000);
    expect(done).toMatchObject({ confirmedRail: rail, externalId: tx, payer: getAddress(payer), amountReceived: '12.5' });
    expect(done.payments).toEqual([expect.objectContaining({ rail, externalId: tx, state: 'confirmed', amount: '12.5' })]);

    await receiver.waitFor(() => receiver.requestsTo('/fake').length === 1, 'payment_link.confirmed');
    const body = verifyWebhook(ep.secret, receiver.requestsTo('/fake')[0]!) as Record<string, any>;
    expect(body).toMatchObject({ type: 'payment_link.confirmed', environment: 'test' });
    expect(body.data).toMatchObject({ id: link.id, status: 'CONFIRMED', confirmedRail: rail, externalId: tx, merchantRef: 'fake-1' });
  }, 120_000);
});
