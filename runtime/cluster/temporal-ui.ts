import { spawn } from 'node:child_process';
import { mkdir, open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stopChild, waitForPort } from '../embedded-temporal.js';

/**
 * The UI server's settings: what docker-compose.yml's temporal-ui service sets through the
 * image's environment (TEMPORAL_DISABLE_WRITE_ACTIONS, TEMPORAL_BATCH_ACTIONS_DISABLED), on the
 * loopback interface only. Anyone who opens the UI reads every history; nobody can signal,
 * terminate, reset or start a workflow from it.
 */
export const uiReadOnly = { disableWriteActions: true, batchActionsDisabled: true } as const;

export function uiConfig(opts: { temporalAddress: string; port: number }) {
  return {
    temporalGrpcAddress: opts.temporalAddress,
    host: '127.0.0.1',
    port: opts.port,
    enableUi: true,
    defaultNamespace: 'default',
    ...uiReadOnly,
    notifyOnNewVersion: false,
    refreshInterval: '0s',
    cors: { allowOrigins: [`http://127.0.0.1:${opts.port}`, `http://localhost:${opts.port}`] },
  };
}

export interface RunningTemporalUi {
  url: string;
  stop(): Promise<void>;
}

/**
 * Runs the Temporal UI's own Go server (github.com/temporalio/ui-server, the release the CLI
 * embeds and the compose file's temporalio/ui image runs) against the cluster's frontend.
 */
export async function startTemporalUi(opts: { binary: string; dir: string; logFile: string; temporalAddress: string; port: number }): Promise<RunningTemporalUi> {
  const configDir = join(opts.dir, 'config');
  await mkdir(configDir, { recursive: true });
  await writeFile(join(configDir, 'malipo.yaml'), `${JSON.stringify(uiConfig(opts), null, 2)}\n`);
  const log = await open(opts.logFile, 'a');
  const child = spawn(opts.binary, ['--root', opts.dir, '--config', 'config', '--env', 'malipo', 'start'], {
    stdio: ['ignore', log.fd, log.fd],
    detached: true,
  });
  await log.close();
  let exited: string | undefined;
  child.on('exit', (code, signal) => {
    exited = `the Temporal UI server exited (${signal ?? `code ${code}`}); its log: ${opts.logFile}`;
  });
  try {
    await waitForPort(opts.port, 30_000, () => exited);
  } catch (err) {
    await stopChild(child);
    throw err;
  }
  return { url: `http://127.0.0.1:${opts.port}`, stop: () => stopChild(child) };
}
