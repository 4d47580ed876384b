import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse } from 'yaml';
import { allSearchAttributeKeys } from '../../domain/search-attributes.js';
import { temporalServerVersion, temporalUiVersion } from '../../runtime/cluster/binaries.js';
import { clusterSettings, dynamicConfigPath, temporalDatabaseNames } from '../../runtime/cluster/settings.js';
import { serverConfig } from '../../runtime/cluster/temporal-server.js';
import { uiConfig, uiReadOnly } from '../../runtime/cluster/temporal-ui.js';

/**
 * `npm run start:cluster` (no Docker) and docker-compose.yml describe one topology: the same
 * Temporal server and UI releases with the same settings. Docker cannot run here, so the compose
 * file is read as data and compared with what the cluster runner writes.
 */
const compose = parse(readFileSync('docker-compose.yml', 'utf8')) as { services: Record<string, any> };
const temporal = compose.services.temporal;
const ports = {
  frontend: 7233, frontendHttp: 7243, frontendMembership: 6933, history: 7234, historyMembership: 6934,
  matching: 7235, matchingMembership: 6935, worker: 7239, workerMembership: 6939,
};
const written = serverConfig({
  target: { host: '127.0.0.1', port: 5432, user: 'malipo', password: 'x', sslmode: undefined },
  names: temporalDatabaseNames('temporal'),
  ports,
  logLevel: 'warn',
});

describe('the cluster runner and docker-compose.yml', () => {
  it('run the same Temporal server, admin tools and UI releases', () => {
    expect(temporal.image).toBe(`temporalio/auto-setup:${temporalServerVersion.slice(1)}`);
    expect(compose.services['temporal-setup'].image).toBe(`temporalio/admin-tools:${temporalServerVersion.slice(1)}`);
    expect(compose.services['temporal-ui'].image).toBe(`temporalio/ui:${temporalUiVersion.slice(1)}`);
  });

  it('give the server the same persistence settings', () => {
    const env = temporal.environment;
    expect(env.DB).toBe(clusterSettings.sqlPlugin);
    expect({ store: env.DBNAME, visibility: env.VISIBILITY_DBNAME }).toEqual(temporalDatabaseNames('temporal'));
    expect(Number(env.NUM_HISTORY_SHARDS)).toBe(written.persistence.numHistoryShards);
    const { sql: store } = written.persistence.datastores.default;
    const { sql: visibility } = written.persistence.datastores.visibility;
    expect([Number(env.SQL_MAX_CONNS), Number(env.SQL_MAX_IDLE_CONNS)]).toEqual([store.maxConns, store.maxIdleConns]);
    expect([Number(env.SQL_VIS_MAX_CONNS), Number(env.SQL_VIS_MAX_IDLE_CONNS)]).toEqual([visibility.maxConns, visibility.maxIdleConns]);
    expect(env.DEFAULT_NAMESPACE_RETENTION).toBe(clusterSettings.namespaceRetention);
    // Temporal's test attributes would take Keyword columns Malipo's five need on SQL visibility.
    expect(env.SKIP_ADD_CUSTOM_SEARCH_ATTRIBUTES).toBe('true');
  });

  it('give the server the one dynamic config file', () => {
    const mount = (temporal.volumes as string[]).map((v) => v.split(':')).find(([, target]) => target === temporal.environment.DYNAMIC_CONFIG_FILE_PATH);
    expect(mount).toBeDefined();
    expect(resolve(mount![0]!)).toBe(dynamicConfigPath);
    expect(written.dynamicConfigClient.filepath).toBe(dynamicConfigPath);
    const values = parse(readFileSync(dynamicConfigPath, 'utf8')) as Record<string, { value: unknown }[]>;
    for (const [key, list] of Object.entries(values)) {
      expect(key).toMatch(/^[a-z]+(\.[A-Za-z]+)+$/);
      expect(list[0]).toHaveProperty('value');
    }
  });

  it('register the same search attributes', () => {
    const setup = compose.services['temporal-setup'].command.join(' ');
    for (const k of allSearchAttributeKeys) expect(setup).toContain(k.name);
  });

  it('keep the UI read-only and on the loopback interface', () => {
    const ui = compose.services['temporal-ui'].environment;
    expect(ui.TEMPORAL_DISABLE_WRITE_ACTIONS).toBe(String(uiReadOnly.disableWriteActions));
    expect(ui.TEMPORAL_BATCH_ACTIONS_DISABLED).toBe(String(uiReadOnly.batchActionsDisabled));
    const local = uiConfig({ temporalAddress: '127.0.0.1:7233', port: 8233 });
    expect(local).toMatchObject({ host: '127.0.0.1', ...uiReadOnly });
  });

  it('bind every Temporal service of the cluster to 127.0.0.1', () => {
    for (const s of Object.values(written.services)) expect(s.rpc.bindOnIP).toBe('127.0.0.1');
    // Membership ports are stored in a smallint column: the runner picks them below 32768.
    for (const p of [ports.frontendMembership, ports.historyMembership, ports.matchingMembership, ports.workerMembership]) expect(p).toBeLessThan(32768);
  });
});
