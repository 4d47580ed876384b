import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

/** Docker cannot run here: the compose file is kept correct by reading it as data. */
describe('docker-compose.yml', () => {
  const compose = parse(readFileSync('docker-compose.yml', 'utf8')) as { services: Record<string, any>; volumes: Record<string, unknown> };

  it('has every production part', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['api', 'postgres', 'redis', 'temporal', 'temporal-setup', 'temporal-ui', 'worker']);
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
    for (const a of ['MalipoStatus', 'MalipoStore', 'MalipoEnvironment', 'MalipoMerchantRef', 'MalipoRail']) expect(setup).toContain(a);
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
});
