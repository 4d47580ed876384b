import type { DatabasePool } from 'slonik';
import { parseInput } from '../api/route.js';
import { createKeyBody, rollKeyBody } from '../api/routes/keys/schemas.js';
import { createApiKey, listApiKeys, revokeApiKey, rollApiKey } from '../services/keys/api-keys.js';
import { storeExists } from '../db/api-key-repo.js';
import { environments, type Environment } from '../domain/environment.js';
import { AppError } from '../domain/errors.js';

/**
 * `npx malipo keys:list|keys:create|keys:roll|keys:revoke --client <id> --env test|live`: the
 * API's key management for whoever runs the server, which is also the way back in for a store
 * whose every secret key is revoked. The same services as the API; answers print as the API's
 * JSON (exit 0), refusals as the API's error body on stderr (exit 1), usage mistakes exit 2.
 */
export const keysUsage = `  keys:list   --client ID --env test|live                 list a store's keys (JSON)
  keys:create --client ID --env test|live [--kind secret|publishable] [--name NAME]
                                                          create a key and print it once (JSON)
  keys:roll   --client ID --env test|live --key KEY_ID [--grace-hours H]
                                                          replace a key; the old one works H more hours (default 24)
  keys:revoke --client ID --env test|live --key KEY_ID    revoke a key now
`;

export type KeyCommand = 'keys:list' | 'keys:create' | 'keys:roll' | 'keys:revoke';

export class UsageError extends Error {}

export interface KeyCommandArgs {
  flag: (name: string) => string | undefined;
}

/** Checks the flags before anything opens the database. */
export function parseKeyCommand(command: KeyCommand, args: KeyCommandArgs) {
  const client = args.flag('--client');
  const env = args.flag('--env');
  if (!client) throw new UsageError(`${command} needs --client <store id> (the clientId stores:create printed)`);
  if (!env || !isEnvironment(env)) throw new UsageError(`${command} needs --env test|live`);
  const key = args.flag('--key');
  if ((command === 'keys:roll' || command === 'keys:revoke') && !key) throw new UsageError(`${command} needs --key <key id> (key_…, from keys:list)`);
  const kind = args.flag('--kind');
  if (kind !== undefined && kind !== 'secret' && kind !== 'publishable') throw new UsageError('--kind is secret or publishable');
  const graceText = args.flag('--grace-hours');
  const graceHours = graceText === undefined ? undefined : Number(graceText);
  if (graceHours !== undefined && (graceText!.trim() === '' || !Number.isFinite(graceHours))) throw new UsageError('--grace-hours is a number of hours, such as 24 or 0.5');
  return { command, scope: { storeId: client, environment: env }, key: key ?? '', kind, name: args.flag('--name'), graceHours };
}

export async function runKeyCommand(pool: DatabasePool, keyPrefix: string, cmd: ReturnType<typeof parseKeyCommand>): Promise<unknown> {
  const deps = { pool, config: { keyPrefix } };
  if (!(await storeExists(pool, cmd.scope.storeId))) throw new AppError('not_found', `No such store: ${cmd.scope.storeId}.`);
  switch (cmd.command) {
    case 'keys:list':
      return listApiKeys(deps, cmd.scope);
    case 'keys:create':
      return createApiKey(deps, cmd.scope, validated({ kind: cmd.kind, name: cmd.name }));
    case 'keys:roll':
      return rollApiKey(deps, cmd.scope, cmd.key, validatedGrace(cmd.graceHours));
    case 'keys:revoke':
      return revokeApiKey(deps, cmd.scope, cmd.key);
  }
}

const isEnvironment = (s: string): s is Environment => (environments as readonly string[]).includes(s);

/** The API's own body schemas, so the CLI refuses what the API refuses, with the same words. */
function validated(input: { kind?: string; name?: string }) {
  const defined = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
  return parseInput(createKeyBody, defined, 'body');
}

function validatedGrace(graceHours: number | undefined): number | undefined {
  return parseInput(rollKeyBody, graceHours === undefined ? {} : { graceHours }, 'body').graceHours;
}

/** The API's error body (without a request id: there is no request). */
export function errorBody(err: AppError): string {
  return JSON.stringify({ error: { type: err.type, code: err.code, message: err.message, ...(err.param ? { param: err.param } : {}) } });
}
