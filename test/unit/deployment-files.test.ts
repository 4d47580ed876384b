import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

/** Docker cannot run here: the compose file is kept correct by reading it as data. */
describe('docker-compose.yml', () => {
  // Merge keys on: api and worker share their environment through `<<: *app-env`.
  const compose = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as { services: Record<string, any>; volumes: Record<string, unknown>; secrets: Record<string, any> };

  it('has every production part', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['api', 'grafana', 'postgres', 'prometheus', 'redis', 'temporal', 'temporal-setup', 'temporal-ui', 'worker']);
  });

  it('runs api and worker from the one Dockerfile against PostgreSQL and Temporal, never embedded', () => {
    for (const name of ['api', 'worker']) {
      const s = compose.services[name];
      expect(s.build).toBe('.');
      expect(s.command).toEqual(['node', 'bin/malipo.mjs', name]);
      expect(s.environment.DATABASE_URL).toMatch(/^postgres:\/\/malipo:.*@postgres:5432\/malipo$/);
      expect(s.environment.TEMPORAL_ADDRESS).toBe('temporal:7233');
      expect(s.environment.ENCRYPTION_KEY).toBeDefined();
    }
    expect(compose.services.api.environment.REDIS_URL).toBe('redis://redis:6379');
    expect(compose.services.api.environment.HOST).toBe('0.0.0.0');
  });

  it('stores Temporal in PostgreSQL and registers the search attributes', () => {
    expect(compose.services.temporal.environment.DB).toBe('postgres12');
    expect(compose.services.temporal.environment.POSTGRES_SEEDS).toBe('postgres');
    const setup = compose.services['temporal-setup'].command.join(' ');
    for (const a of ['MalipoStatus', 'MalipoStore', 'MalipoEnvironment', 'MalipoMerchantRef', 'MalipoRail', 'MalipoWatchUntil']) expect(setup).toContain(a);
    expect(compose.volumes).toHaveProperty('pgdata');
  });

  it('keeps the Temporal UI read-only and on the loopback interface; the Temporal frontend unpublished', () => {
    const ui = compose.services['temporal-ui'];
    expect(ui.environment.TEMPORAL_DISABLE_WRITE_ACTIONS).toBe('true');
    expect(ui.environment.TEMPORAL_BATCH_ACTIONS_DISABLED).toBe('true');
    expect(ui.ports).toEqual(['127.0.0.1:8233:8080']);
    expect(compose.services.temporal.ports).toBeUndefined();
    for (const s of Object.values(compose.services)) {
      for (const p of (s.ports ?? []) as string[]) if (s !== compose.services.api) expect(p).toMatch(/^127\.0\.0\.1:/);
    }
  });

  it('makes api and workers scrapeable: the token from the environment, never a committed one', () => {
    const { api, worker, prometheus } = compose.services;
    expect(api.environment.METRICS_TOKEN).toMatch(/^\$\{METRICS_TOKEN:\?/);
    expect(worker.environment.METRICS_TOKEN).toBeUndefined();
    expect(worker.environment.WORKER_METRICS_PORT).toBe(9464);
    for (const s of [api, worker]) expect(s.environment.TEMPORAL_METRICS_PORT).toBe(9465);
    expect(compose.secrets.metrics_token).toEqual({ environment: 'METRICS_TOKEN' });
    expect(prometheus.secrets).toEqual(['metrics_token']);
    expect(prometheus.image).toMatch(/^prom\/prometheus:v\d+\.\d+\.\d+$/);
    expect(prometheus.volumes).toContain('./deploy/prometheus:/etc/prometheus:ro');
  });

  it('signs everyone in to Grafana, with an admin password from the environment', () => {
    const { grafana } = compose.services;
    expect(grafana.image).toMatch(/^grafana\/grafana:\d+\.\d+\.\d+$/);
    expect(grafana.environment.GF_SECURITY_ADMIN_PASSWORD).toMatch(/^\$\{GRAFANA_ADMIN_PASSWORD:\?/);
    expect(grafana.environment.GF_AUTH_ANONYMOUS_ENABLED).toBe('false');
    expect(grafana.environment.GF_USERS_ALLOW_SIGN_UP).toBe('false');
    expect(grafana.ports).toEqual(['127.0.0.1:3001:3000']);
    expect(compose.services.prometheus.ports).toEqual(['127.0.0.1:9090:9090']);
  });

  it('names only services that exist in depends_on', () => {
    for (const s of Object.values(compose.services)) {
      const deps = Array.isArray(s.depends_on) ? s.depends_on : Object.keys(s.depends_on ?? {});
      for (const d of deps) expect(Object.keys(compose.services)).toContain(d);
    }
  });
});

describe('Dockerfile', () => {
  it('builds on a current Node LTS and runs as an unprivileged user', () => {
    const text = readFileSync('Dockerfile', 'utf8');
    expect(text).toMatch(/^FROM node:24-bookworm-slim/m);
    expect(text).toMatch(/^USER node$/m);
  });

  it('installs exactly the lockfile (npm ci), as CI does', () => {
    expect(readFileSync('Dockerfile', 'utf8')).toMatch(/^RUN npm ci --omit=dev\b/m);
    const ci = readFileSync('.ci/run', 'utf8');
    expect(ci).toMatch(/^npm ci\b/m);
    expect(ci).not.toMatch(/^npm install\b/m);
  });
});
