import type { ServerResponse } from 'node:http';
import type { DarajaState, PhoneScript, Prompt } from './state.js';
import type { CallbackResult } from './templates.js';

const results: CallbackResult[] = ['success', 'cancelled', 'wrong_pin', 'insufficient', 'timeout'];

/**
 * The emulator's own control endpoints (not part of Daraja), for the offline demo and browser
 * tests that drive it from another process:
 *   GET  /_emulator/prompts                                   every prompt received
 *   POST /_emulator/script   {phone, result?, callback?}      how prompts to a phone end
 *   POST /_emulator/complete {checkoutRequestId, result?}     settle a prompt now and call back
 */
export async function handleControl(
  url: URL,
  method: string,
  raw: string,
  res: ServerResponse,
  ctx: { state: DarajaState; complete(id: string, result?: CallbackResult): Promise<Prompt> },
): Promise<void> {
  const send = (status: number, body: unknown): void => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  let body: Record<string, unknown> = {};
  try {
    body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
  } catch {
    return send(400, { error: 'body must be JSON' });
  }
  if (method === 'GET' && url.pathname === '/_emulator/prompts') {
    return send(200, { prompts: [...ctx.state.prompts.values()].map(summary) });
  }
  if (method === 'POST' && url.pathname === '/_emulator/script') {
    const result = (body.result ?? 'success') as CallbackResult;
    const callback = (body.callback ?? 'once') as PhoneScript['callback'];
    if (typeof body.phone !== 'string' || !results.includes(result) || !['once', 'none', 'duplicate'].includes(callback)) {
      return send(400, { error: `expected {phone, result: ${results.join('|')}, callback: once|none|duplicate}` });
    }
    ctx.state.scripts.set(body.phone, { result, callback });
    return send(200, { ok: true });
  }
  if (method === 'POST' && url.pathname === '/_emulator/complete') {
    const result = body.result as CallbackResult | undefined;
    if (typeof body.checkoutRequestId !== 'string' || (result !== undefined && !results.includes(result))) {
      return send(400, { error: 'expected {checkoutRequestId, result?}' });
    }
    try {
      return send(200, summary(await ctx.complete(body.checkoutRequestId, result)));
    } catch (err) {
      return send(409, { error: (err as Error).message });
    }
  }
  return send(404, { error: 'unknown control endpoint' });
}

function summary(p: Prompt) {
  return {
    checkoutRequestId: p.checkoutRequestId,
    merchantRequestId: p.merchantRequestId,
    shortCode: p.merchant.shortCode,
    phone: p.phone,
    amount: p.amount,
    state: p.state,
    result: p.result,
    receipt: p.receipt,
    deliveries: p.deliveries,
  };
}
