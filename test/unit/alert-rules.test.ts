import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';

/**
 * The alerting rules, the Prometheus config and the Grafana dashboard are checked by Prometheus'
 * own tool (Debian's `prometheus` package): rules and config load, and every alert fires on its
 * recorded series and stays quiet on a near miss (deploy/prometheus/alerts*.test.yml). Around it,
 * what promtool cannot know: that each metric named exists in Malipo, and each alert has a runbook.
 */
const dir = 'deploy/prometheus';
const ruleTests = [`${dir}/alerts.test.yml`, `${dir}/alerts.week.test.yml`];

interface Rule { alert?: string; record?: string; expr: string; for?: string; labels?: Record<string, string>; annotations?: Record<string, string> }
interface RuleTest { name: string; alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }

const groups = (parse(readFileSync(`${dir}/alerts.yml`, 'utf8')) as { groups: { name: string; rules: Rule[] }[] }).groups;
const rules = groups.flatMap((g) => g.rules);
const alerts = rules.filter((r): r is Rule & { alert: string } => r.alert !== undefined);
const dashboard = JSON.parse(readFileSync('deploy/grafana/dashboards/malipo.json', 'utf8')) as { panels: { title: string; targets?: { expr: string }[] }[] };
const dashboardExprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));

function promtool(args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile('promtool', args, { maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') {
        resolve({ code: -1, output: 'promtool is not installed: run `apt-get install prometheus` (Debian ships promtool in it)' });
        return;
      }
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

/** Runs promtool and fails with its whole output unless it exits 0. */
async function expectPromtoolPasses(args: string[]): Promise<void> {
  const { code, output } = await promtool(args);
  if (code === -1) throw new Error(output);
  if (code !== 0) throw new Error(`promtool ${args.join(' ')} exited ${code}:\n${output}`);
}

describe('Prometheus rules and config (promtool)', () => {
  it('finds promtool', async () => {
    await expectPromtoolPasses(['--version']);
  });

  it('loads alerts.yml', async () => {
    await expectPromtoolPasses(['check', 'rules', `${dir}/alerts.yml`]);
  });

  it('loads prometheus.yml with its rule file and a token file where the compose secret goes', async () => {
    // The config reads the compose secret at /run/secrets/metrics_token; promtool wants the file.
    const tmp = mkdtempSync(join(tmpdir(), 'malipo-prometheus-'));
    try {
      const config = readFileSync(`${dir}/prometheus.yml`, 'utf8');
      expect(config.split('/run/secrets/metrics_token')).toHaveLength(2);
      writeFileSync(join(tmp, 'metrics_token'), 'a-token-for-the-check-only\n');
      writeFileSync(join(tmp, 'prometheus.yml'), config.replace('/run/secrets/metrics_token', join(tmp, 'metrics_token')));
      copyFileSync(`${dir}/alerts.yml`, join(tmp, 'alerts.yml'));
      await expectPromtoolPasses(['check', 'config', join(tmp, 'prometheus.yml')]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('passes every alert test case (promtool test rules)', async () => {
    await expectPromtoolPasses(['test', 'rules', ...ruleTests]);
  }, 180_000);

  it('parses every expression of the Grafana dashboard', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'malipo-dashboard-'));
    try {
      // Grafana fills in $__rate_interval; any duration stands for it in a parse check.
      const asRules = dashboardExprs.map((expr, i) => ({ record: `dashboard:expr_${i}`, expr: expr.replaceAll('$__rate_interval', '5m') }));
      writeFileSync(join(tmp, 'dashboard.yml'), JSON.stringify({ groups: [{ name: 'dashboard', rules: asRules }] }));
      expect(asRules.length).toBeGreaterThan(20);
      await expectPromtoolPasses(['check', 'rules', join(tmp, 'dashboard.yml')]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe('alerts.yml', () => {
  const cases = ruleTests.flatMap((f) => (parse(readFileSync(f, 'utf8')) as { tests: RuleTest[] }).tests);
  const checks = cases.flatMap((c) => c.alert_rule_test ?? []);

  it('has the alerts issue 31 asks for', () => {
    expect(alerts.map((a) => a.alert).sort()).toEqual([
      'MalipoChainProviderDisagreement', 'MalipoChainWatcherLagging', 'MalipoChainWatcherStalled', 'MalipoLinkWorkflowsUnstarted',
      'MalipoMpesaStkFailureRate', 'MalipoRailNoConfirmations', 'MalipoReconciliationMismatch', 'MalipoScrapeTargetDown',
      'MalipoTemporalTaskBacklog', 'MalipoWebhookDeliveriesExhausted', 'MalipoWebhookOutboxStuck',
    ]);
  });

  it.each(alerts.map((a) => [a.alert, a] as const))('%s has a firing test case and a near miss', (name) => {
    expect(checks.filter((c) => c.alertname === name && c.exp_alerts.length > 0).length).toBeGreaterThanOrEqual(1);
    expect(checks.filter((c) => c.alertname === name && c.exp_alerts.length === 0).length).toBeGreaterThanOrEqual(1);
  });

  it.each(alerts.map((a) => [a.alert, a] as const))('%s has a for:, a severity, its annotations and a runbook that names it', (name, rule) => {
    expect(rule.for).toMatch(/^\d+[smh]$/);
    expect(rule.labels?.severity).toMatch(/^(page|ticket|\{\{ if eq \$labels\.environment "live" \}\}page\{\{ else \}\}ticket\{\{ end \}\})$/);
    expect(rule.annotations?.summary).toBeTruthy();
    expect(rule.annotations?.description).toBeTruthy();
    expect(rule.annotations?.runbook_url).toBe(`docs/runbooks/${name}.md`);
    const runbook = readFileSync(`docs/runbooks/${name}.md`, 'utf8');
    expect(runbook.split('\n')[0]).toBe(`# ${name}`);
    for (const section of ['## What it means', '## Confirm it', '## What to do']) expect(runbook).toContain(section);
    expect(readFileSync('docs/runbooks/README.md', 'utf8')).toContain(`(${name}.md)`);
  });

  it('has no runbook for an alert that does not exist', () => {
    const files = readdirSync('docs/runbooks').filter((f) => f !== 'README.md').map((f) => f.replace(/\.md$/, ''));
    expect(files.sort()).toEqual(alerts.map((a) => a.alert).sort());
  });

  it('records every malipo: series that an alert or the dashboard reads', () => {
    const recorded = new Set(rules.flatMap((r) => (r.record ? [r.record] : [])));
    const read = [...rules.map((r) => r.expr), ...dashboardExprs].flatMap((e) => [...e.matchAll(/\bmalipo:[a-z0-9_:]+/g)].map((m) => m[0]));
    expect(read.length).toBeGreaterThan(0);
    for (const name of read) expect(recorded).toContain(name);
  });
});

describe('metric names in alerts.yml and the dashboard', () => {
  // What runtime/metrics.ts registers, read from its source, plus the metrics issue 31 adds in
  // the same release (another part of it writes them).
  const registered = [...readFileSync('runtime/metrics.ts', 'utf8').matchAll(/name: '(malipo_[a-z0-9_]+)'/g)].map((m) => m[1]!);
  const addedInIssue31 = ['malipo_chain_lag_seconds', 'malipo_link_workflows_unstarted', 'malipo_link_workflows_unstarted_oldest_seconds'];
  const known = new Set([...registered, ...addedInIssue31].flatMap((n) => [n, `${n}_bucket`, `${n}_sum`, `${n}_count`]));
  // The Temporal SDK's exporter (TEMPORAL_METRICS_PORT, seconds, `_total` counters), as a worker
  // of @temporalio/worker 1.x served them on this machine (docs/runbooks/MalipoTemporalTaskBacklog.md).
  const temporalSdk = new Set([
    'temporal_workflow_task_schedule_to_start_latency_bucket', 'temporal_workflow_task_schedule_to_start_latency_count',
    'temporal_activity_schedule_to_start_latency_bucket', 'temporal_activity_schedule_to_start_latency_count',
    'temporal_worker_task_slots_available', 'temporal_num_pollers',
  ]);
  const used = (exprs: string[]) => [...new Set(exprs.flatMap((e) => [...e.matchAll(/(?<![a-z0-9_:])((?:malipo|temporal)_[a-z0-9_]+)/g)].map((m) => m[1]!)))];

  it('reads runtime/metrics.ts', () => {
    expect(registered).toContain('malipo_payment_links_total');
    expect(registered.length).toBeGreaterThan(15);
  });

  it.each([
    ['alerts.yml', rules.map((r) => r.expr)],
    ['the Grafana dashboard', dashboardExprs],
  ])('%s names only metrics Malipo or the Temporal SDK exports', (_where, exprs) => {
    const names = used(exprs);
    expect(names.length).toBeGreaterThan(5);
    expect(names.filter((n) => !known.has(n) && !temporalSdk.has(n))).toEqual([]);
  });

  it('the dashboard shows every metric an alert reads', () => {
    const inDashboard = new Set(used(dashboardExprs).map((n) => n.replace(/_(bucket|count|sum)$/, '')));
    const inAlerts = used(rules.map((r) => r.expr)).map((n) => n.replace(/_(bucket|count|sum)$/, ''));
    expect(inAlerts.filter((n) => !inDashboard.has(n))).toEqual([]);
  });
});
