import { expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ensureClusterBinaries } from '../../runtime/cluster/binaries.js';
import { dynamicConfigPath } from '../../runtime/cluster/settings.js';

/** The dynamic config both the cluster and docker-compose.yml give the server: known keys, valid values. */
it('passes the pinned server\'s own dynamic config check', async () => {
  const { server } = await ensureClusterBinaries({ serverPath: process.env.TEMPORAL_SERVER_PATH });
  const { stdout, stderr } = await promisify(execFile)(server, ['validate-dynamic-config', dynamicConfigPath]);
  expect(`${stdout}${stderr}`).not.toMatch(/warning|error/i);
  expect(stdout).toContain('temporal-dynamicconfig.yaml');
});
