import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CreatedStore } from '../../db/store-repo.js';
import { startDarajaEmulator, type DarajaEmulator } from '../../emulators/daraja/server.js';
import { paymentLinkWorkflowId } from '../../domain/workflow-contract.js';
import { startClusterApps, type ClusterApps } from '../helpers/cluster-apps.js';
import { connectBody, sandboxPaybill } from '../helpers/daraja.js';
import { evmXpub } from '../helpers/fixtures.js';
import { httpCall } from '../helpers/http.js';
import { startHoldingProxy } from '../helpers/holding-proxy.js';
import { eventually } from '../helpers/wait.js';
import { verifyWebhook, WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * The production topology as separate processes: two `malipo api` processes sharing Redis and two
 * `malipo worker` processes, on the run's Temporal (the cluster on PostgreSQL under
 * `npm run test:cluster`). Requests go to one API process or the other on purpose.
 */
const merchant = sandboxPaybill('cluster-7k2m');
let apps: ClusterApps;
let daraja: DarajaEmulator;
let proxy: Awaited<ReturnType<typeof startHoldingProxy>>;
let receiver: WebhookReceiver;
let store: CreatedStore;
let key: string;

beforeAll(async () => {
  daraja = await startDarajaEmulator({
    merchants: [merchant],
    // Daraja calls back API process 0, whichever process sent the prompt (a load balancer would pick).
    deliverVia: (u) => new URL(u.pathname, apps.group.apis[0]!.url),
  });
  // Once armed, the next STK query hangs, so the test can kill the worker that is running it.
  proxy = await startHoldingProxy(daraja.url, '/mpesa/stkpushquery/v1/query');
  receiver = await WebhookReceiver.start();
  apps = await startClusterApps({ apis: 2, workers: 2, env: { MPESA_SANDBOX_URL: proxy.url, WEBHOOK_TEST_ALLOWED_NETWORKS: 'loopback' } });
  store = await apps.createStore('Duka la Pili');
  key = store.keys.test.secretKey;
}, 240_000);

afterAll(async () => {
  await apps?.stop();
  await proxy?.close();
  await daraja?.close();
  await receiver?.down();
});

const getLink = async (api: number, id: string) => (await apps.request(api, { method: 'GET', url: `/v1/payment-links/${id}`, key })).body;

describe('two API processes and two workers on one Temporal', () => {
  it('creates a link on one API process and takes its payment through the other', async () => {
    const wallet = await apps.request(1, { method: 'PUT', url: `/v1/merchant/clients/${store.clientId}/wallets/evm`, key, payload: { xpub: evmXpub } });
    expect(wallet.status).toBe(200);
    const created = await apps.request(0, { method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '25', enabledRails: ['USDT_BSC'], merchantRef: 'two-apis' } });
    expect(created.status).toBe(201);
    const paid = await apps.request(1, { method: 'POST', url: `/v1/payment-links/${created.body.id}/simulate-payment`, key, payload: { rail: 'USDT_BSC' } });
    expect(paid.status).toBe(200);
    const onFirst = await eventually(async () => {
      const link = await getLink(0, created.body.id);
      return link.status === 'CONFIRMED' ? link : undefined;
    }, 'the link to read CONFIRMED on the other API process');
    expect(onFirst).toMatchObject({ id: created.body.id, confirmedRail: 'USDT_BSC', simulated: true });
    expect(await getLink(1, created.body.id)).toEqual(onFirst);
  });

  it('shares one rate-limit budget of 120/min for GET /v1/chains between the two API processes', async () => {
    // A fresh source address, so earlier runs against the same Redis do not count.
    const ip = `127.${Math.floor(Math.random() * 200) + 20}.${Math.floor(Math.random() * 200) + 20}.${Math.floor(Math.random() * 200) + 20}`;
    const statuses: number[] = [];
    for (let i = 0; i < 121; i++) {
      statuses.push((await httpCall(apps.group.apis[i % 2]!.url!, { method: 'GET', url: '/v1/chains', localAddress: ip })).status);
    }
    expect(statuses.slice(0, 120).every((s) => s === 200)).toBe(true);
    expect(statuses[120]).toBe(429);
  });

  it('shows the cluster in the Temporal UI, which refuses write actions', async () => {
    const ui = process.env.MALIPO_TEST_TEMPORAL_UI_URL;
    if (!ui) return; // the dev-server run has no separate UI server
    expect(new URL(ui).hostname).toBe('127.0.0.1');
    const settings = (await httpCall(ui, { method: 'GET', url: '/api/v1/settings' })).body;
    expect(settings).toMatchObject({ DisableWriteActions: true, BatchActionsDisabled: true });
    const created = await apps.request(0, { method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '3', enabledRails: ['USDT_BSC'] } });
    const workflowId = paymentLinkWorkflowId(created.body.id);
    const listed = await eventually(async () => {
      const res = await httpCall(ui, { method: 'GET', url: `/api/v1/namespaces/default/workflows?query=${encodeURIComponent(`WorkflowId="${workflowId}"`)}` });
      return res.body?.executions?.length ? res.body.executions : undefined;
    }, 'the UI to list the link workflow');
    expect(listed[0].execution.workflowId).toBe(workflowId);
    // An Authorization header skips the UI's CSRF check, so what answers is the read-only rule.
    const terminate = await httpCall(ui, {
      method: 'POST', url: `/api/v1/namespaces/default/workflows/${encodeURIComponent(workflowId)}/terminate`,
      headers: { authorization: 'Bearer anyone' }, payload: { reason: 'from the UI' },
    });
    expect(terminate.status).toBe(405);
    expect((await getLink(0, created.body.id)).status).toBe('PENDING');
    expect((await apps.temporal.workflow.getHandle(workflowId).describe()).status.name).toBe('RUNNING');
  });

  it('pays links opened before every worker and API process was replaced (the upgrade path)', async () => {
    const connected = await apps.request(0, { method: 'POST', url: `/v1/merchant/clients/${store.clientId}/mobile-money/connect`, key, payload: connectBody(merchant) });
    expect(connected.status).toBe(200);
    const chainLink = (await apps.request(0, { method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '7', enabledRails: ['USDT_BSC'] } })).body.id as string;
    const mpesaLink = (await apps.request(1, { method: 'POST', url: '/v1/payment-links', key, payload: { mobileMoneyAmount: 90, enabledRails: ['MOBILE_MONEY'] } })).body.id as string;
    const prompt = await apps.request(0, { method: 'POST', url: `/v1/merchant/payment-links/${mpesaLink}/pay/mobile-money`, key, payload: { phoneNumber: '254712000555' } });
    expect(prompt.status).toBe(200);
    expect((await getLink(1, mpesaLink)).status).toBe('PROCESSING');

    const before = [...apps.group.workers, ...apps.group.apis].map((p) => p.pid);
    await apps.group.roll();
    const after = [...apps.group.workers, ...apps.group.apis].map((p) => p.pid);
    expect(after).toHaveLength(4);
    expect(after.filter((pid) => before.includes(pid))).toEqual([]);

    // New processes replay the open workflows from the cluster's history and take them on.
    await daraja.complete(prompt.body.checkoutRequestId, 'success');
    const paid = await apps.request(1, { method: 'POST', url: `/v1/payment-links/${chainLink}/simulate-payment`, key, payload: { rail: 'USDT_BSC' } });
    expect(paid.body.status).toBe('CONFIRMED');
    const mpesa = await eventually(async () => {
      const link = await getLink(0, mpesaLink);
      return link.status === 'CONFIRMED' ? link : undefined;
    }, 'the M-Pesa link prompted before the roll to be CONFIRMED after it', 60_000);
    expect(mpesa.confirmedRail).toBe('MOBILE_MONEY');
  }, 240_000);

  it('completes an M-Pesa payment while the worker running it is killed', async () => {
    const endpoint = (await apps.request(1, { method: 'POST', url: '/v1/webhook-endpoints', key, payload: { url: receiver.url('/paid') } })).body;
    const created = await apps.request(0, { method: 'POST', url: '/v1/payment-links', key, payload: { mobileMoneyAmount: 150, enabledRails: ['MOBILE_MONEY'], merchantRef: 'kill-a-worker' } });
    expect(created.status).toBe(201);
    const linkId = created.body.id as string;
    proxy.arm();
    const prompt = await apps.request(1, { method: 'POST', url: `/v1/merchant/payment-links/${linkId}/pay/mobile-money`, key, payload: { phoneNumber: '254712000777' } });
    expect(prompt.status).toBe(200);
    await daraja.complete(prompt.body.checkoutRequestId, 'success'); // the callback reaches API process 0

    // The workflow checks the callback with an STK query, which hangs: find who runs it and kill it.
    await eventually(async () => (proxy.held() === 1 ? true : undefined), 'the STK query to reach the hanging operator', 30_000);
    const workflowId = paymentLinkWorkflowId(linkId);
    const identity = await eventually(async () => {
      const d = await apps.temporal.workflowService.describeWorkflowExecution({ namespace: apps.namespace, execution: { workflowId } });
      return d.pendingActivities?.find((a) => a.lastWorkerIdentity)?.lastWorkerIdentity ?? undefined;
    }, 'the pending STK query activity to name its worker');
    const victim = apps.group.workers.find((w) => identity.startsWith(`${w.pid}@`));
    expect(victim).toBeDefined();
    const survivor = apps.group.workers.find((w) => w !== victim)!;
    victim!.child.kill('SIGKILL');
    await victim!.exited;

    // The activity times out on the server, and the surviving worker retries it and confirms.
    const confirmed = await eventually(async () => {
      const link = await getLink(1, linkId);
      return link.status === 'CONFIRMED' ? link : undefined;
    }, 'the link to be CONFIRMED by the surviving worker', 150_000);
    expect(confirmed).toMatchObject({ confirmedRail: 'MOBILE_MONEY', merchantRef: 'kill-a-worker' });
    expect(await getLink(0, linkId)).toEqual(confirmed);
    const history = await apps.temporal.workflow.getHandle(workflowId).fetchHistory();
    const started = (history.events ?? []).filter((e) => e.activityTaskStartedEventAttributes).map((e) => e.activityTaskStartedEventAttributes!.identity);
    expect(started.some((id) => id?.startsWith(`${survivor.pid}@`))).toBe(true);

    await receiver.waitFor(() => receiver.requestsTo('/paid').length >= 1, 'payment_link.confirmed', 60_000);
    const body = verifyWebhook(endpoint.secret, receiver.requestsTo('/paid')[0]!) as Record<string, any>;
    expect(body).toMatchObject({ type: 'payment_link.confirmed', data: { id: linkId, status: 'CONFIRMED' } });
  }, 240_000);
});
