import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { defaultPayloadConverter } from '@temporalio/common';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { loadConfig } from '../../config/config.js';
import { temporalUiHref } from '../../web/dashboard/link-detail-view.js';
import { maskPhone } from '../../domain/phone.js';
import { mergeTimeline, recordEntries, workflowEntries, type LinkRecords, type TimelineEntry } from '../../services/payment-links/timeline.js';

/** The dashboard's link timeline: recorded workflow histories (test/histories/) and read-model records, merged. */
const recorded = (name: string) => historyFromJSON(JSON.parse(readFileSync(`test/histories/${name}.json`, 'utf8')).history);
const titles = (entries: TimelineEntry[]) => entries.map((e) => e.title);

describe('workflowEntries', () => {
  it('tells an M-Pesa payment: prompt, callback hint, STK query, status changes, webhook dispatch', () => {
    const entries = workflowEntries(recorded('payment-link-mpesa-paid'));
    expect(titles(entries)).toEqual([
      'Workflow started',
      'M-Pesa prompt requested',
      'M-Pesa prompt sent to the phone',
      'Status PROCESSING',
      'M-Pesa callback received by the workflow (a hint: settled by an STK query)',
      'STK query: paid',
      'Status CONFIRMED',
      'Webhook event dispatched',
    ]);
    expect(entries[2]!.detail).toMatch(/^CheckoutRequestID ws_CO_\d+$/);
    expect(entries.every((e) => e.source === 'workflow' && e.at !== null)).toBe(true);
    expect(entries.find((e) => e.title === 'Status CONFIRMED')).toMatchObject({ tone: 'ok', dedupeKey: 'status:CONFIRMED' });
    // Oldest first, as the history is.
    expect([...entries].sort((a, b) => Date.parse(a.at!) - Date.parse(b.at!))).toEqual(entries);
  });

  it('tells a simulated payment with its rail, a cancel, a reorg, and STK queries that could not reach M-Pesa', () => {
    expect(workflowEntries(recorded('payment-link-simulated'))).toContainEqual(expect.objectContaining({ title: 'Simulated payment requested', detail: 'Rail USDT_BSC' }));
    expect(titles(workflowEntries(recorded('payment-link-cancelled-then-paid')))).toEqual(
      expect.arrayContaining(['Cancel requested', 'Status CANCELLED', 'Deposit checked: confirmed on chain']),
    );
    const reorg = workflowEntries(recorded('payment-link-verified-reorg-then-confirmed'));
    expect(reorg).toContainEqual(expect.objectContaining({ title: 'Deposit checked: dropped on chain', tone: 'bad' }));
    expect(titles(reorg).filter((t) => t.startsWith('Status '))).toEqual(['Status PROCESSING', 'Status PENDING', 'Status PROCESSING', 'Status CONFIRMED']);
    const outage = workflowEntries(recorded('payment-link-mpesa-daraja-outage')).filter((e) => e.title.startsWith('STK query'));
    expect(outage.map((e) => e.tone)).toEqual(['bad', 'bad', 'ok']);
    expect(outage[0]!.detail).toContain('Daraja could not be reached');
  });

  it('reads only allow-listed fields: activity inputs and unknown result fields never reach the timeline', () => {
    const payload = (value: unknown) => defaultPayloadConverter.toPayload(value)!;
    const at = { seconds: 1_790_000_000, nanos: 0 };
    const history = {
      events: [
        { eventId: 1, eventTime: at, workflowExecutionStartedEventAttributes: { input: { payloads: [payload({ linkId: 'pl_x', secret: 'wf-input-secret' })] } } },
        { eventId: 2, eventTime: at, activityTaskScheduledEventAttributes: { activityType: { name: 'sendStkPush' }, input: { payloads: [payload({ phoneNumber: '254711222333', passkey: 'input-passkey' })] } } },
        { eventId: 3, eventTime: at, activityTaskCompletedEventAttributes: { scheduledEventId: 2, result: { payloads: [payload({ checkoutRequestId: 'ws_CO_1', callbackToken: 'result-token' })] } } },
        { eventId: 4, eventTime: at, activityTaskScheduledEventAttributes: { activityType: { name: 'recordPayment' }, input: { payloads: [payload({ payer: '254711222333' })] } } },
        { eventId: 5, eventTime: at, activityTaskCompletedEventAttributes: { scheduledEventId: 4, result: { payloads: [payload(null)] } } },
        { eventId: 6, eventTime: at, workflowExecutionSignaledEventAttributes: { signalName: 'mobileMoneyCallback', input: { payloads: [payload({ key: 'ws_CO_1', body: 'signal-body' })] } } },
      ],
    };
    const entries = workflowEntries(history as never);
    expect(titles(entries)).toEqual(['Workflow started', 'M-Pesa prompt sent to the phone', 'M-Pesa callback received by the workflow (a hint: settled by an STK query)']);
    const shown = JSON.stringify(entries);
    for (const secret of ['wf-input-secret', '254711222333', 'input-passkey', 'result-token', 'signal-body']) expect(shown).not.toContain(secret);
    expect(entries[0]!.at).toBe(new Date(1_790_000_000_000).toISOString());
  });

  it('shows a refused update and a failed activity with their messages', () => {
    const at = { seconds: 1_790_000_000, nanos: 5_000_000 };
    const history = {
      events: [
        { eventId: 1, eventTime: at, workflowExecutionUpdateAcceptedEventAttributes: { protocolInstanceId: 'u1', acceptedRequest: { input: { name: 'cancel' } } } },
        { eventId: 2, eventTime: at, workflowExecutionUpdateCompletedEventAttributes: { meta: { updateId: 'u1' }, outcome: { failure: { message: 'invalid_state: The payment link is CONFIRMED' } } } },
        { eventId: 3, eventTime: at, activityTaskScheduledEventAttributes: { activityType: { name: 'sendStkPush' } } },
        { eventId: 4, eventTime: at, activityTaskFailedEventAttributes: { scheduledEventId: 3, failure: { message: 'Wrong credentials' } } },
      ],
    };
    expect(workflowEntries(history as never)).toEqual([
      expect.objectContaining({ title: 'Cancel requested', at: '2026-09-21T14:13:20.005Z' }),
      expect.objectContaining({ title: 'Cancel requested: refused', detail: 'invalid_state: The payment link is CONFIRMED', tone: 'bad' }),
      expect.objectContaining({ title: 'M-Pesa prompt could not be sent', detail: 'Wrong credentials', tone: 'bad' }),
    ]);
  });
});

const baseRecords = (): LinkRecords => ({
  link: { createdAt: '2026-11-24T08:00:00.000Z', status: 'PENDING', expiresAt: '2026-11-25T08:00:00.000Z', confirmedAt: null, confirmedRail: null },
  prompts: [],
  callbacks: [],
  deposits: [],
  payments: [],
  event: null,
  deliveries: [],
});

describe('recordEntries and mergeTimeline', () => {
  it('tells a chain payment from the records: deposit seen, confirmations, counted, confirmed, event, webhook attempts', () => {
    const r = baseRecords();
    r.link = { ...r.link, status: 'CONFIRMED', confirmedAt: '2026-11-24T08:05:00.000Z', confirmedRail: 'USDT_BSC' };
    r.deposits = [{ rail: 'USDT_BSC', txHash: `0x${'ab'.repeat(32)}`, amount: '3', blockNumber: '120', state: 'confirmed', createdAt: '2026-11-24T08:04:00.000Z', updatedAt: '2026-11-24T08:05:00.000Z' }];
    r.payments = [{ rail: 'USDT_BSC', externalId: `0x${'ab'.repeat(32)}`, amount: '3', state: 'confirmed', disposition: 'payment', failureReason: null, createdAt: '2026-11-24T08:04:00.000Z', updatedAt: '2026-11-24T08:05:00.000Z', simulated: false }];
    r.event = { id: 'evt_1', type: 'payment_link.confirmed', createdAt: '2026-11-24T08:05:00.000Z' };
    r.deliveries = [
      { attempt: 1, endpointUrl: 'https://shop.example/hooks', status: 'failed', responseStatus: 500, latencyMs: 12, error: 'HTTP 500', trigger: 'automatic', createdAt: '2026-11-24T08:05:01.000Z' },
      { attempt: 2, endpointUrl: 'https://shop.example/hooks', status: 'succeeded', responseStatus: 200, latencyMs: 9, error: null, trigger: 'automatic', createdAt: '2026-11-24T08:05:06.000Z' },
    ];
    const merged = mergeTimeline(recordEntries(r), null);
    expect(titles(merged)).toEqual([
      'Link created',
      'Deposit seen on chain',
      'Deposit confirmations reached',
      'Payment counted',
      'Status CONFIRMED',
      'Webhook event payment_link.confirmed written',
      'Webhook attempt 1: failed (HTTP 500)',
      'Webhook attempt 2: succeeded (HTTP 200)',
    ]);
    expect(merged[1]!.detail).toBe('3 USDT · USDT_BSC · tx 0xabababab…ababab · block 120');
    expect(merged.map((e) => e.tone).slice(-2)).toEqual(['bad', 'ok']);
  });

  it('tells M-Pesa prompts and callbacks with the phone masked and a disbelieved callback flagged', () => {
    const r = baseRecords();
    r.prompts = [{ attempt: 'pl_x:prompt:1', state: 'sent', phone: '254711222333', amountKes: 1300, checkoutRequestId: 'ws_CO_9', failureMessage: null, createdAt: '2026-11-24T08:01:00.000Z' }];
    r.callbacks = [{ checkoutRequestId: 'ws_CO_9', resultCode: '0', resultDesc: 'Processed', receipt: 'SFX1', suspiciousReason: 'claims success; the STK query says 1032', receivedAt: '2026-11-24T08:02:00.000Z' }];
    const entries = recordEntries(r);
    expect(entries[1]).toMatchObject({ title: 'M-Pesa prompt recorded', detail: '1300 KES to 2547•••••333 · CheckoutRequestID ws_CO_9' });
    expect(entries[2]).toMatchObject({ title: 'M-Pesa callback stored', tone: 'bad' });
    expect(entries[2]!.detail).toContain('not believed: claims success');
    expect(JSON.stringify(entries)).not.toContain('254711222333');
    expect(maskPhone('254711222333')).toBe('2547•••••333');
  });

  it("keeps one status entry when both sources tell it (the workflow's exact time wins) and puts untimed entries last", () => {
    const r = baseRecords();
    r.link = { ...r.link, status: 'CANCELLED' };
    const records = recordEntries(r);
    expect(mergeTimeline(records, null).at(-1)).toMatchObject({ title: 'Status CANCELLED', at: null });
    const workflow: TimelineEntry[] = [
      { at: '2026-11-24T08:00:00.500Z', title: 'Workflow started', tone: 'info', source: 'workflow' },
      { at: '2026-11-24T08:03:00.000Z', title: 'Status CANCELLED', tone: 'bad', source: 'workflow', dedupeKey: 'status:CANCELLED' },
    ];
    const merged = mergeTimeline(records, workflow);
    expect(merged.map((e) => `${e.source}:${e.title}`)).toEqual(['records:Link created', 'workflow:Workflow started', 'workflow:Status CANCELLED']);
  });
});

describe('the Temporal UI deep link', () => {
  it('names the namespace and the encoded workflow id under TEMPORAL_UI_URL, and is absent when no UI is known', () => {
    const uiUrl = loadConfig({ TEMPORAL_UI_URL: 'https://temporal.example.com/ui/' }).temporal.uiUrl;
    expect(uiUrl).toBe('https://temporal.example.com/ui');
    expect(temporalUiHref(uiUrl, 'payments prod', 'payment-link/pl_abc')).toBe('https://temporal.example.com/ui/namespaces/payments%20prod/workflows/payment-link%2Fpl_abc');
    expect(loadConfig({}).temporal.uiUrl).toBeUndefined();
    expect(temporalUiHref(undefined, 'default', 'payment-link/pl_abc')).toBeNull();
    expect(() => loadConfig({ TEMPORAL_UI_URL: 'not a url' })).toThrow(/TEMPORAL_UI_URL/);
  });
});
