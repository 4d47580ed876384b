import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'slonik';
import { z } from 'zod';
import type { CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { startDarajaEmulator, type DarajaEmulator } from '../../emulators/daraja/server.js';
import { connectBody, sandboxPaybill } from '../helpers/daraja.js';
import { paymentLinkWorkflowId } from '../../domain/workflow-contract.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { TcpSwitch } from '../helpers/tcp-switch.js';
import { eventually } from '../helpers/wait.js';

/**
 * Link creation does not depend on Temporal: with the Temporal frontend unreachable for the API
 * and the workers alike, `POST /v1/payment-links` still answers 201; once Temporal is back the
 * workers start the workflows within seconds, and a prompt, cancel or simulated payment on a link
 * whose workflow has not started yet starts it first. Each workflow starts exactly once. A
 * Temporal that hangs does not hold creation up either: the start runs after the answer.
 */
let stack: Stack;
let temporal: TcpSwitch;
let store: CreatedStore;
let daraja: DarajaEmulator;
const merchant = sandboxPaybill('away-7c1d');

beforeAll(async () => {
  daraja = await startDarajaEmulator({ merchants: [merchant], deliverVia: (u) => new URL(u.pathname, stack.baseUrl) });
  temporal = await TcpSwitch.start(process.env.MALIPO_TEST_TEMPORAL_ADDRESS!);
  stack = await startStack({ MPESA_SANDBOX_URL: daraja.url, ENCRYPTION_KEY: formatKeyEntry(generateKey()) }, { temporalAddress: temporal.address });
  store = await stack.createStore('Temporal away');
  const connected = await stack.request({ method: 'POST', url: `/v1/merchant/clients/${store.clientId}/mobile-money/connect`, key: store.keys.test.secretKey, payload: connectBody(merchant) });
  expect(connected.status).toBe(200);
  await connectAllRails(stack, store.clientId);
}, 120_000);
afterAll(async () => {
  temporal?.onAgain();
  await stack?.stop();
  await temporal?.close();
  await daraja?.close();
});

const key = () => store.keys.test.secretKey;
const create = (merchantRef: string) =>
  stack.request({ method: 'POST', url: '/v1/payment-links', key: key(), payload: { usdtAmount: '5', enabledRails: ['USDT_BSC', 'MOBILE_MONEY'], merchantRef } });
const started = async (id: string) =>
  stack.pool.oneFirst(sql.type(z.object({ s: z.boolean() }))`SELECT workflow_started AS s FROM payment_links WHERE id = ${id}`);

/** The answer once the clients reached Temporal again (gRPC reconnects with a backoff): 503s until then. */
async function untilReachable(call: () => ReturnType<Stack['request']>) {
  return eventually(async () => {
    const res = await call();
    return res.status === 503 ? undefined : res;
  }, 'the API to reach Temporal again', 30_000);
}

/** How many runs Temporal has of a workflow id (through a direct connection: the switch is the test's). */
async function runsOf(workflowId: string): Promise<number> {
  let n = 0;
  for await (const _ of stack.temporal.workflow.list({ query: `WorkflowId = "${workflowId}"` })) n++;
  return n;
}

describe('while Temporal hangs', () => {
  it('answers 201 without waiting for it, and starts each workflow once it answers again', async () => {
    temporal.stall();
    const t0 = Date.now();
    const links = [];
    // Each would wait out the start deadline (2 s) if creation waited for its workflow: 6 s for three.
    for (let i = 0; i < 3; i++) links.push(await create(`made-while-hung-${i}`));
    const answeredInMs = Date.now() - t0;
    expect(links.map((l) => l.status)).toEqual([201, 201, 201]);
    expect(answeredInMs).toBeLessThan(2_000);
    for (const l of links) expect(await started(l.body.id)).toBe(false);
    temporal.onAgain();
    for (const l of links) {
      await eventually(async () => ((await started(l.body.id)) ? true : undefined), 'the workflow to start once Temporal answers', 30_000);
      expect(await runsOf(paymentLinkWorkflowId(l.body.id))).toBe(1);
    }
  }, 120_000);
});

describe('while Temporal cannot be reached', () => {
  it('creates links (201), refuses to move money (503), and starts every workflow once Temporal is back', async () => {
    temporal.off();
    const t0 = Date.now();
    const first = await create('made-while-down-1');
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ status: 'PENDING', merchantRef: 'made-while-down-1', bscAddress: expect.stringMatching(/^0x/) });
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(await started(first.body.id)).toBe(false);
    // Readable like any other link meanwhile.
    const read = await stack.request({ method: 'GET', url: `/v1/payment-links/${first.body.id}`, key: key() });
    expect([read.status, read.body.status]).toEqual([200, 'PENDING']);
    // Nothing can be paid without its workflow: a clear, retryable refusal that changes nothing.
    const refused = await stack.request({ method: 'POST', url: `/v1/payment-links/${first.body.id}/simulate-payment`, key: key(), payload: { rail: 'USDT_BSC' } });
    expect([refused.status, refused.body.error.code, refused.headers['retry-after']]).toEqual([503, 'upstream_unavailable', '5']);
    expect(await started(first.body.id)).toBe(false);

    const second = await create('made-while-down-2');
    expect(second.status).toBe(201);
    temporal.onAgain();

    // The second, younger than the workers' starter waits for, is started by the cancel itself
    // (or by the workers, if the clients take longer than that to reconnect): it is cancelled.
    const cancelled = await untilReachable(() => stack.request({ method: 'POST', url: `/v1/payment-links/${second.body.id}/cancel`, key: key() }));
    expect([cancelled.status, cancelled.body.status]).toEqual([200, 'CANCELLED']);
    expect(await started(second.body.id)).toBe(true);

    // The first is started by the workers within seconds, then pays like any link.
    await eventually(async () => ((await started(first.body.id)) ? true : undefined), 'the workers to start the first workflow', 30_000);
    const paid = await stack.request({ method: 'POST', url: `/v1/payment-links/${first.body.id}/simulate-payment`, key: key(), payload: { rail: 'USDT_BSC' } });
    expect([paid.status, paid.body.status]).toEqual([200, 'CONFIRMED']);
    for (const id of [first.body.id, second.body.id]) expect(await runsOf(paymentLinkWorkflowId(id))).toBe(1);
  }, 120_000);

  it('prompts M-Pesa on a link whose workflow is not started yet by starting it first', async () => {
    temporal.off();
    const link = await create('prompt-after-outage');
    expect(link.status).toBe(201);
    temporal.onAgain();
    const prompt = await untilReachable(() =>
      stack.request({ method: 'POST', url: `/v1/merchant/payment-links/${link.body.id}/pay/mobile-money`, key: key(), payload: { phoneNumber: '254712000123' } }));
    expect([prompt.status, prompt.body.checkoutRequestId]).toEqual([200, expect.any(String)]);
    expect((await stack.request({ method: 'GET', url: `/v1/payment-links/${link.body.id}`, key: key() })).body.status).toBe('PROCESSING');
    expect(await started(link.body.id)).toBe(true);
    expect(await runsOf(paymentLinkWorkflowId(link.body.id))).toBe(1);
  }, 60_000);
});
