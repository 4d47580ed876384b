// One markdown table from the JSON results of the benches that ran (`npm run bench`): each
// measure beside its baseline from the same run, the ratio, the target and whether it was met,
// and the serving process's event-loop p99 under each HTTP load.

export type Results = Record<string, any>;

interface Row {
  measure: string;
  app: string;
  baseline: string;
  ratio: string;
  target: string;
  eventLoop: string;
  verdict: string;
}

/** The event-loop limit for every HTTP load (p99 of `monitorEventLoopDelay`, resolution 10 ms). */
export const eventLoopTargetMs = 20;

const n = (x: number) => Math.round(x).toLocaleString('en-US');
const verdict = (met: boolean) => (met ? 'met' : '**missed**');
const el = (r: any) => (typeof r?.eventLoopP99Ms === 'number' ? `${r.eventLoopP99Ms} ms (max ${r.eventLoopMaxMs})` : '—');
const ratio = (x: number) => (x >= 0.01 ? `${x.toFixed(2)}×` : `1/${n(1 / x)}`);
/** A baseline's own event-loop p99, beside its throughput: how much of the delay the machine adds. */
const loop = (r: any) => (typeof r?.eventLoopP99Ms === 'number' ? ` (loop p99 ${r.eventLoopP99Ms} ms)` : '');

/** The rows for whatever ran; benches without a target are listed for the record ("—"). */
export function tableRows(r: Results): Row[] {
  const rows: Row[] = [];
  // Judged: loads whose serving process only serves (the load from wrk in its own process). The
  // `api` bench's client and the stack's workers share the serving loop, so its delays are upper
  // bounds, shown apart.
  const loads: Array<{ what: string; p99: number; max: number; judged: boolean }> = [];
  const load = (what: string, x: any, judged = true) => {
    if (typeof x?.eventLoopP99Ms === 'number') loads.push({ what, p99: x.eventLoopP99Ms, max: x.eventLoopMaxMs, judged });
  };

  if (r.http) {
    const { malipo: m, bareFastify: b } = r.http;
    rows.push({
      measure: '`GET /v1/chains`, 50 connections (`http`)', app: `${n(m.reqPerSec)} req/s, p99 ${m.p99Ms} ms`,
      baseline: `bare Fastify, same JSON: ${n(b.reqPerSec)} req/s${loop(b)}`, ratio: ratio(r.http.ratio), target: '≥ 0.95×',
      eventLoop: el(m), verdict: verdict(r.http.ratio >= 0.95),
    });
    load('GET /v1/chains', m);
  }
  if (r.reads) {
    const b = r.reads.barePrimaryKeyRoute;
    for (const [key, what] of [['getLink', '`GET /v1/payment-links/:id`'], ['getInvoice200', '`GET /v1/invoices/:id` 200'], ['getInvoice304', '`GET /v1/invoices/:id` 304']] as const) {
      const x = r.reads[key];
      rows.push({
        measure: `${what}, 50 connections (\`reads\`)`, app: `${n(x.reqPerSec)} req/s, p99 ${x.p99Ms} ms`,
        baseline: `bare Fastify + \`pg\` PK route: ${n(b.reqPerSec)} req/s${loop(b)}`, ratio: ratio(x.ratio), target: '≥ 0.85×',
        eventLoop: el(x), verdict: verdict(x.ratio >= 0.85),
      });
      load(what.replaceAll('`', ''), x);
    }
  }
  if (r.create) {
    const { app: a, bareInsertsRoute: b, rawWorkflowStarts: w } = r.create;
    rows.push({
      measure: `create a link, c=${a.concurrency}, one store (\`create\`)`, app: `${n(a.perSecond)}/s, p99 ${n(a.p99Ms)} ms; every workflow started ${n(a.allStartedAfterMs)} ms after the round`,
      baseline: `bare route, same rows in one transaction: ${n(b.perSecond)}/s${loop(b)}; raw workflow starts ${n(w.perSecond)}/s`,
      ratio: ratio(r.create.ratio), target: '≥ 0.8×, loop p99 < 20 ms', eventLoop: el(a), verdict: verdict(r.create.ratio >= 0.8 && a.eventLoopP99Ms < 20),
    });
    load('create c=32', a);
  }
  if (r.api) {
    const a = r.api;
    for (const c of [1, 8]) {
      const x = a[`create_c${c}`];
      const w = a[`rawWorkflowStart_c${c}`];
      if (!x || !w) continue;
      rows.push({
        measure: `create a link, c=${c} (\`api\`)`, app: `${n(x.perSecond)}/s, p99 ${n(x.p99Ms)} ms`,
        baseline: `raw workflow starts: ${n(w.perSecond)}/s${loop(w)}`, ratio: ratio(x.perSecond / w.perSecond), target: '—',
        eventLoop: el(x), verdict: '—',
      });
      load(`api create c=${c}`, x, false);
    }
    if (a.get_c8) {
      rows.push({
        measure: '`GET /v1/payment-links/:id`, c=8, client in process (`api`)', app: `${n(a.get_c8.perSecond)}/s, p99 ${a.get_c8.p99Ms} ms`,
        baseline: '—', ratio: '—', target: '—', eventLoop: el(a.get_c8), verdict: '—',
      });
      load('api get c=8', a.get_c8, false);
    }
  }
  if (r.webhooks) {
    const { throughput: t, inProcess: p, baseline: b, confirmationToFirstAttempt: c, commitToFirstAttempt: d } = r.webhooks;
    const cpu = (x: { nodeMsPerDelivery: number; temporalMsPerDelivery: number }) => `CPU per delivery: ${x.nodeMsPerDelivery} ms Node, ${x.temporalMsPerDelivery} ms Temporal`;
    rows.push({
      measure: `signed webhook deliveries to a local receiver, events committed to the outbox and sent by the workers' relay (as in production), ${t.endpoints} endpoints × ${t.events} events (\`webhooks\`)`,
      app: `${n(t.deliveriesPerSecond)} deliveries/s, all ${n(t.deliveries)} logged 2xx; ${cpu(t)}`,
      baseline: `one workflow per delivery (the previous design), same server: ${n(b.workflowsPerSecond)}/s`,
      ratio: ratio(r.webhooks.ratio), target: '≥ 2,000/s', eventLoop: '—', verdict: verdict(t.deliveriesPerSecond >= 2000),
    });
    if (p) {
      rows.push({
        measure: `the same fan-out called in process on events claimed ahead, no relay (\`webhooks\`)`,
        app: `${n(p.deliveriesPerSecond)} deliveries/s; ${cpu(p)}`, baseline: '—', ratio: '—', target: '—', eventLoop: '—', verdict: '—',
      });
    }
    rows.push({
      measure: `payment confirmed → first webhook attempt arrives, ${c.links} links, idle (\`webhooks\`)`,
      app: `p99 ${n(c.p99Ms)} ms (p50 ${n(c.p50Ms)})`, baseline: `one workflow start → result, same server: p99 ${n(b.startToResult.p99Ms)} ms`,
      ratio: '—', target: 'p99 < 1,000 ms', eventLoop: '—', verdict: verdict(c.p99Ms < 1000),
    });
    rows.push({
      measure: `event committed → first webhook attempt arrives (the relay polls every ${d.relayPollMs} ms), ${d.events} events (\`webhooks\`)`,
      app: `p99 ${d.p99Ms} ms (p50 ${d.p50Ms})`, baseline: '—', ratio: '—', target: '—', eventLoop: '—', verdict: '—',
    });
  }
  if (r.derive) {
    const d = r.derive;
    rows.push({
      measure: 'EVM receive-address derivation, branch node cached (`derive`)', app: `${n(d.addressesPerSecond)}/s (${d.microsPerAddress} µs)`,
      baseline: `bip32 + tiny-secp256k1 + viem called directly: ${n(d.libraryAddressesPerSecond)}/s`, ratio: ratio(d.ratio), target: '≥ 0.8×',
      eventLoop: '—', verdict: verdict(d.ratio >= 0.8),
    });
  }
  if (r.caches) {
    for (const [key, what] of [['receiveAddresses', 'derived addresses'], ['rateLimitClients', 'rate-limit clients']] as const) {
      const x = r.caches[key];
      if (!x) continue;
      rows.push({
        measure: `a full bounded cache of ${n(x.limit)} ${what}, every call a new key (\`caches\`)`, app: `${n(x.callsPerSecond)} calls/s`,
        baseline: `a Map in insertion order dropping its first key: ${n(x.mapCallsPerSecond)} calls/s`, ratio: ratio(x.ratio), target: '—', eventLoop: '—', verdict: '—',
      });
    }
  }
  if (r.deriveRoute) {
    for (const [kind, what] of [['repeat', 'indexes handed out before'], ['fresh', 'a new highest index each'], ['cold', 'an index nothing derived before each']] as const) {
      const x = r.deriveRoute[kind];
      if (!x) continue;
      rows.push({
        measure: `\`POST /v1/wallets/derive\`, c=${r.deriveRoute.concurrency}, ${what} (\`derive-route\`)`,
        app: `${n(x.app.perSecond)}/s, p99 ${x.app.p99Ms} ms`,
        baseline: `the same TRON + EVM pair derived in process: ${n(x.inProcessPairs.perSecond)}/s${x.bareRoute ? `; bare Fastify + \`pg\`, the pair and one statement: ${n(x.bareRoute.perSecond)}/s (app ${ratio(x.ratioToBareRoute)} of it)` : ''}`,
        ratio: `${ratio(x.ratio)} (rounds ${x.ratioSpread.min}–${x.ratioSpread.max}); CPU ${x.cpuUsPerPair} µs a pair / ${x.cpuUsPerRequest} µs a request: ${ratio(x.cpuRatio)}`, target: '≥ 0.8×',
        eventLoop: el(x.app), verdict: verdict(x.ratio >= 0.8),
      });
    }
  }
  if (r.match) {
    const m = r.match;
    rows.push({
      measure: `ingest: eth_getLogs JSON → matched owners, ${n(m.watched)} watched (\`match\`)`, app: `${n(m.ingestPerSecond)} transfers/s`,
      baseline: `\`JSON.parse\` alone: ${n(m.jsonParseOnlyPerSecond)}/s; previous path: ${n(m.previousIngestPerSecond)}/s`,
      ratio: `${ratio(m.ingestPerSecond / m.jsonParseOnlyPerSecond)} of parse; ${ratio(m.ingestPerSecond / m.previousIngestPerSecond)} previous`,
      target: '≥ 300,000/s', eventLoop: '—', verdict: verdict(m.ingestPerSecond >= 300_000),
    });
    for (const [what, now, before] of [['link', m.linkBytesPerAddress, m.previousLinkBytesPerAddress], ['derived', m.derivedBytesPerAddress, m.previousDerivedBytesPerAddress]] as const) {
      rows.push({
        measure: `memory per watched ${what} address (\`match\`)`, app: `${now} B`, baseline: `previous Map: ${before} B`,
        ratio: ratio(now / before), target: '≤ 170 B', eventLoop: '—', verdict: verdict(now <= 170),
      });
    }
  }
  if (r.watch) {
    const at = (r.watch.results as any[]).find((x) => x.index === 1_000_000);
    if (at) {
      rows.push({
        measure: 'watch-set full load after a derive at index 1,000,000 (`watch`)', app: `${at.watchSetFullLoadMs} ms`,
        baseline: `previous design: ${at.previousDesignLoadSeconds} s`, ratio: ratio(at.watchSetFullLoadMs / (at.previousDesignLoadSeconds * 1000)),
        target: '—', eventLoop: '—', verdict: '—',
      });
    }
  }
  if (r.start) {
    rows.push({
      measure: 'cold start, embedded default (`start`)', app: `${n(r.start.firstStartMs)} ms first, ${n(r.start.restartMs)} ms restart`,
      baseline: '—', ratio: '—', target: '—', eventLoop: '—', verdict: '—',
    });
  }
  if (r.chain) {
    for (const x of Object.values(r.chain as Record<string, any>)) {
      const at = `${x.rail}, poll ${n(x.pollMs)} ms, ${x.rounds} rounds (\`chain\`)`;
      const p = (p50: number, p99: number) => `p50 ${n(p50)} ms, p99 ${n(p99)} ms`;
      rows.push({
        measure: `mined → PROCESSING, ${at}`, app: p(x.minedToProcessingP50Ms, x.minedToProcessingP99Ms),
        baseline: '—', ratio: '—', target: '—', eventLoop: '—', verdict: '—',
      });
      rows.push({
        measure: `block at depth → CONFIRMED, ${at}`, app: p(x.depthToConfirmedP50Ms, x.depthToConfirmedP99Ms),
        baseline: `by the database's confirmed_at: ${p(x.depthToConfirmedAtP50Ms, x.depthToConfirmedAtP99Ms)}`,
        ratio: '—', target: x.pollMs === 1000 ? 'p99 < 3,000 ms' : '—', eventLoop: '—',
        verdict: x.pollMs === 1000 ? verdict(x.depthToConfirmedP99Ms < 3000) : '—',
      });
      rows.push({
        measure: `block at depth → first webhook arrives, ${at}`, app: p(x.depthToWebhookP50Ms, x.depthToWebhookP99Ms),
        baseline: '—', ratio: '—', target: x.pollMs === 1000 ? 'p99 < 3,000 ms' : '—', eventLoop: '—',
        verdict: x.pollMs === 1000 ? verdict(x.depthToWebhookP99Ms < 3000) : '—',
      });
    }
  }
  const judged = loads.filter((l) => l.judged);
  if (judged.length > 0) {
    const worst = judged.reduce((a, b) => (b.p99 > a.p99 ? b : a));
    const max = judged.reduce((a, b) => (b.max > a.max ? b : a));
    rows.push({
      measure: `event-loop delay under each HTTP load above, served alone (${judged.length} loads)`, app: `worst p99 ${worst.p99} ms (${worst.what})`,
      baseline: typeof r.eventLoopIdle?.eventLoopP99Ms === 'number' ? `idle loop, same process: p99 ${r.eventLoopIdle.eventLoopP99Ms} ms` : '—',
      ratio: '—', target: `p99 < ${eventLoopTargetMs} ms`, eventLoop: `max ${max.max} ms (${max.what})`,
      verdict: verdict(judged.every((l) => l.p99 < eventLoopTargetMs)),
    });
  }
  const shared = loads.filter((l) => !l.judged);
  if (shared.length > 0) {
    const worst = shared.reduce((a, b) => (b.p99 > a.p99 ? b : a));
    rows.push({
      measure: `event-loop delay, client and workers in the serving process (\`api\`, ${shared.length} loads: upper bounds)`,
      app: `worst p99 ${worst.p99} ms (${worst.what})`, baseline: '—', ratio: '—', target: '—', eventLoop: '—', verdict: '—',
    });
  }
  return rows;
}

/** The markdown table (header, separator, one line per row). */
export function table(r: Results): string {
  const head = ['measure', 'app', 'baseline (same run)', 'ratio', 'target', 'event-loop p99', 'verdict'];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const row of tableRows(r)) {
    lines.push(`| ${[row.measure, row.app, row.baseline, row.ratio, row.target, row.eventLoop, row.verdict].join(' | ')} |`);
  }
  return lines.join('\n');
}
