import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { CreatedStore } from '../../db/store-repo.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { encryptionEnv, loopbackWebhooks } from '../helpers/webhook-harness.js';
import { verifyWebhook, WebhookReceiver } from '../helpers/webhook-receiver.js';

let stack: Stack;
let store: CreatedStore;
let receiver: WebhookReceiver;
beforeAll(async () => {
  stack = await startStack({ ...loopbackWebhooks, ...encryptionEnv() });
  store = await stack.createStore('Webhook e2e');
  await connectAllRails(stack, store.clientId, 'test');
  receiver = await WebhookReceiver.start();
});
afterAll(async () => {
  await stack?.stop();
  await receiver?.down();
});

it('sends payment_link.confirmed with the full link record, merchantRef and metadata unchanged, when a link is paid', async () => {
  const key = store.keys.test.secretKey;
  const ep = (await stack.request({ method: 'POST', url: '/v1/webhook-endpoints', key, payload: { url: receiver.url('/e2e') } })).body;
  const metadata = { orderId: 'A-1001', items: [{ sku: 'tee', qty: 2 }], note: 'Karibu 👋', nested: { empty: {}, nothing: null } };
  const link = await stack.request({
    method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '12.5', enabledRails: ['USDT_BSC'], merchantRef: 'order-1001', metadata },
  });
  expect(link.status).toBe(201);
  const paid = await stack.request({ method: 'POST', url: `/v1/payment-links/${link.body.id}/simulate-payment`, key, payload: { rail: 'USDT_BSC' } });
  expect(paid.body.status).toBe('CONFIRMED');

  await receiver.waitFor(() => receiver.requestsTo('/e2e').length === 1, 'payment_link.confirmed');
  const body = verifyWebhook(ep.secret, receiver.requestsTo('/e2e')[0]!) as Record<string, any>;
  const fetched = (await stack.request({ method: 'GET', url: `/v1/payment-links/${link.body.id}`, key })).body;
  expect(body).toEqual({ id: expect.stringMatching(/^evt_/), type: 'payment_link.confirmed', createdAt: fetched.confirmedAt, environment: 'test', data: fetched });
  expect(body.data).toMatchObject({ id: link.body.id, status: 'CONFIRMED', merchantRef: 'order-1001', metadata, confirmedRail: 'USDT_BSC' });
  expect(receiver.requestsTo('/e2e')[0]!.headers['webhook-id']).toBe(body.id);
});
