import { describe, expect, it } from '@jest/globals';
import { resultCodeLabel } from '../../rails/mpesa/result-codes.js';
import { forgetProviderHealth, providerBook } from '../../rails/chain/providers.js';
import { countUnstartedLinks, createMetricsRegistry } from '../../runtime/metrics.js';

describe('metric labels', () => {
  it('keeps an M-Pesa result code only when it is one of the known ones', () => {
    expect(resultCodeLabel(0)).toBe('0');
    expect(resultCodeLabel(' 1032 ')).toBe('1032');
    expect(resultCodeLabel('SFC_IC0003')).toBe('SFC_IC0003');
    expect(resultCodeLabel('123456')).toBe('other');
    expect(resultCodeLabel('254712345678')).toBe('other');
  });

  it('serves the product metrics and the process metrics in the text format', async () => {
    const { metrics, render } = createMetricsRegistry();
    metrics.link('created', 'USDT_TRON', 'live');
    metrics.watcherPosition('USDT_TRON', 'live', 1_000n, 990n, 3);
    metrics.stk('callback', resultCodeLabel('1032'));
    const { contentType, body } = await render();
    expect(contentType).toContain('text/plain');
    expect(body).toContain('malipo_payment_links_total{event="created",rail="USDT_TRON",environment="live"} 1');
    expect(body).toContain('malipo_chain_lag_blocks{rail="USDT_TRON",environment="live"} 10');
    expect(body).toContain('malipo_chain_lag_seconds{rail="USDT_TRON",environment="live"} 30');
    expect(body).toContain('malipo_mpesa_stk_total{step="callback",result="1032"} 1');
    expect(body).toContain('malipo_process_cpu_seconds_total');
  });

  it('counts provider reports and failovers by position, never by URL', async () => {
    forgetProviderHealth();
    const { render } = createMetricsRegistry();
    const book = providerBook('USDT_BSC', 'live', ['https://key123@rpc-a.example/v1/secret', 'https://rpc-b.example']);
    book.report(0, 'erroring', 'timeout', 1_000_000);
    book.report(0, 'erroring', 'timeout', 1_000_500);
    book.report(1, 'disagreeing', 'another hash', 1_000_000, false);
    const { body } = await render();
    expect(body).toContain('malipo_chain_provider_reports_total{event="error",rail="USDT_BSC",environment="live",position="1"} 2');
    expect(body).toContain('malipo_chain_provider_reports_total{event="failover",rail="USDT_BSC",environment="live",position="1"} 1');
    expect(body).toContain('malipo_chain_provider_reports_total{event="disagreement",rail="USDT_BSC",environment="live",position="2"} 1');
    expect(body).not.toContain('example');
    forgetProviderHealth();
  });

  it('leaves the unstarted-links gauges out of a scrape whose database read fails, and says so once per outage', async () => {
    const source = createMetricsRegistry();
    const warnings: unknown[] = [];
    let reads = 0;
    let down = true;
    countUnstartedLinks(source, async () => {
      reads++;
      if (down) throw new Error('connection refused');
      return { count: 3, oldestSeconds: 75.5 };
    }, { warn: (...args: unknown[]) => void warnings.push(args) } as never);
    for (let i = 0; i < 2; i++) {
      const { body } = await source.render();
      expect(body).toContain('malipo_process_cpu_seconds_total');
      expect(body).not.toMatch(/^malipo_link_workflows_unstarted(_oldest_seconds)? /m);
    }
    expect(warnings).toHaveLength(1);
    // One read per scrape serves both gauges.
    expect(reads).toBe(2);
    down = false;
    const { body } = await source.render();
    expect(body).toMatch(/^malipo_link_workflows_unstarted 3$/m);
    expect(body).toMatch(/^malipo_link_workflows_unstarted_oldest_seconds 75.5$/m);
  });
});
