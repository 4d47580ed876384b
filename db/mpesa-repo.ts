import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import type { Environment } from '../domain/environment.js';
import { shortcodeTypes } from '../rails/mpesa/merchant.js';

const env = z.enum(['test', 'live']);

/** A connection as stored: the three credentials are ciphertexts (domain/crypto/credentials.ts). */
const connectionRow = z.object({
  store_id: z.string(),
  environment: env,
  shortcode: z.string(),
  shortcode_type: z.enum(shortcodeTypes),
  store_number: z.string().nullable(),
  consumer_key_enc: z.string(),
  consumer_secret_enc: z.string(),
  passkey_enc: z.string(),
  connected_at: z.string(),
  updated_at: z.string(),
});
export type ConnectionRow = z.infer<typeof connectionRow>;
export type NewConnection = Omit<ConnectionRow, 'connected_at' | 'updated_at'>;

export interface TokenRow {
  tokenEnc: string;
  expiresAt: string;
}

/**
 * Saves a connection and the token its validation minted, replacing any previous connection of
 * the store in that environment (and its cached token) in one transaction: a reconnect is all or
 * nothing, and no process keeps using a token of the old credentials.
 */
export async function saveConnection(pool: DatabasePool, c: NewConnection, token: TokenRow): Promise<void> {
  await pool.transaction(async (tx) => {
    await tx.query(sql.unsafe`
      INSERT INTO mobile_money_connections
        (store_id, environment, shortcode, shortcode_type, store_number, consumer_key_enc, consumer_secret_enc, passkey_enc)
      VALUES (${c.store_id}, ${c.environment}, ${c.shortcode}, ${c.shortcode_type}, ${c.store_number},
              ${c.consumer_key_enc}, ${c.consumer_secret_enc}, ${c.passkey_enc})
      ON CONFLICT (store_id, environment) DO UPDATE SET
        shortcode = EXCLUDED.shortcode, shortcode_type = EXCLUDED.shortcode_type, store_number = EXCLUDED.store_number,
        consumer_key_enc = EXCLUDED.consumer_key_enc, consumer_secret_enc = EXCLUDED.consumer_secret_enc,
        passkey_enc = EXCLUDED.passkey_enc, connected_at = now(), updated_at = now()`);
    await saveToken(tx, c.store_id, c.environment, token);
  });
}

export async function findConnection(db: CommonQueryMethods, storeId: string, environment: Environment): Promise<ConnectionRow | null> {
  return db.maybeOne(sql.type(connectionRow)`
    SELECT store_id, environment, shortcode, shortcode_type, store_number, consumer_key_enc, consumer_secret_enc,
           passkey_enc, connected_at, updated_at
    FROM mobile_money_connections WHERE store_id = ${storeId} AND environment = ${environment}`);
}

/** Every connection, for `credentials:reencrypt`. */
export async function listConnectionKeys(db: CommonQueryMethods): Promise<{ storeId: string; environment: Environment }[]> {
  const rows = await db.any(sql.type(z.object({ store_id: z.string(), environment: env }))`
    SELECT store_id, environment FROM mobile_money_connections ORDER BY store_id, environment`);
  return rows.map((r) => ({ storeId: r.store_id, environment: r.environment }));
}

/**
 * Re-encrypts one connection under a row lock, so a concurrent reconnect is not overwritten
 * with the old credentials. `transform` gets the stored ciphertexts and returns the new ones.
 */
export async function rewriteConnectionCiphertexts(
  pool: DatabasePool,
  storeId: string,
  environment: Environment,
  transform: (row: ConnectionRow, token: TokenRow | null) => { consumerKey: string; consumerSecret: string; passkey: string; token: string | null },
): Promise<boolean> {
  return pool.transaction(async (tx) => {
    const row = await tx.maybeOne(sql.type(connectionRow)`
      SELECT store_id, environment, shortcode, shortcode_type, store_number, consumer_key_enc, consumer_secret_enc,
             passkey_enc, connected_at, updated_at
      FROM mobile_money_connections WHERE store_id = ${storeId} AND environment = ${environment} FOR UPDATE`);
    if (!row) return false;
    const token = await findToken(tx, storeId, environment);
    const next = transform(row, token);
    await tx.query(sql.unsafe`
      UPDATE mobile_money_connections SET consumer_key_enc = ${next.consumerKey}, consumer_secret_enc = ${next.consumerSecret},
        passkey_enc = ${next.passkey}, updated_at = now()
      WHERE store_id = ${storeId} AND environment = ${environment}`);
    if (token && next.token) {
      await tx.query(sql.unsafe`UPDATE mobile_money_tokens SET token_enc = ${next.token} WHERE store_id = ${storeId} AND environment = ${environment}`);
    }
    return true;
  });
}

export async function findToken(db: CommonQueryMethods, storeId: string, environment: Environment): Promise<TokenRow | null> {
  const row = await db.maybeOne(sql.type(z.object({ token_enc: z.string(), expires_at: z.string() }))`
    SELECT token_enc, expires_at FROM mobile_money_tokens WHERE store_id = ${storeId} AND environment = ${environment}`);
  return row ? { tokenEnc: row.token_enc, expiresAt: row.expires_at } : null;
}

/**
 * Runs `fn` in a transaction holding the store's token lock for one environment: Daraja voids an
 * app's previous token whenever it issues a new one, so two processes minting at once would each
 * void the other's. Whoever waits reads, under the lock, the token the first one saved.
 */
export async function withTokenLock<T>(pool: DatabasePool, storeId: string, environment: Environment, fn: (tx: CommonQueryMethods) => Promise<T>): Promise<T> {
  return pool.transaction(async (tx) => {
    await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtextextended(${`mobile_money_tokens:${storeId}:${environment}`}, 0))`);
    return fn(tx);
  });
}

export async function saveToken(db: CommonQueryMethods, storeId: string, environment: Environment, token: TokenRow): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO mobile_money_tokens (store_id, environment, token_enc, expires_at)
    VALUES (${storeId}, ${environment}, ${token.tokenEnc}, ${token.expiresAt})
    ON CONFLICT (store_id, environment) DO UPDATE SET token_enc = EXCLUDED.token_enc, expires_at = EXCLUDED.expires_at`);
}

const stkRow = z.object({
  link_id: z.string(),
  attempt: z.string(),
  store_id: z.string(),
  environment: env,
  phone_number: z.string(),
  amount_kes: z.number(),
  business_short_code: z.string(),
  party_b: z.string(),
  callback_token_hash: z.instanceof(Buffer),
  state: z.enum(['sending', 'sent', 'rejected', 'unknown']),
  checkout_request_id: z.string().nullable(),
  merchant_request_id: z.string().nullable(),
  failure_type: z.string().nullable(),
  failure_message: z.string().nullable(),
});
export type StkRequestRow = z.infer<typeof stkRow>;
export type NewStkRequest = Pick<
  StkRequestRow,
  'link_id' | 'attempt' | 'store_id' | 'environment' | 'phone_number' | 'amount_kes' | 'business_short_code' | 'party_b' | 'callback_token_hash'
>;

const stkColumns = sql.fragment`link_id, attempt, store_id, environment, phone_number, amount_kes, business_short_code, party_b,
  callback_token_hash, state, checkout_request_id, merchant_request_id, failure_type, failure_message`;

export async function findStkRequest(db: CommonQueryMethods, linkId: string, attempt: string): Promise<StkRequestRow | null> {
  return db.maybeOne(sql.type(stkRow)`SELECT ${stkColumns} FROM mpesa_stk_requests WHERE link_id = ${linkId} AND attempt = ${attempt}`);
}

/** The prompt a callback token was issued for (looked up by the token's hash: the token is never stored). */
export async function findStkRequestByTokenHash(db: CommonQueryMethods, tokenHash: Buffer): Promise<StkRequestRow | null> {
  return db.maybeOne(sql.type(stkRow)`SELECT ${stkColumns} FROM mpesa_stk_requests WHERE callback_token_hash = ${sql.binary(tokenHash)}`);
}

export async function findStkRequestByCheckoutId(db: CommonQueryMethods, checkoutRequestId: string): Promise<StkRequestRow | null> {
  return db.maybeOne(sql.type(stkRow)`SELECT ${stkColumns} FROM mpesa_stk_requests WHERE checkout_request_id = ${checkoutRequestId}`);
}

/**
 * Records a prompt before it is sent. Returns the row that holds the (link, attempt) slot: the
 * new one, or the one a previous run of the activity wrote.
 */
export async function claimStkRequest(db: CommonQueryMethods, r: NewStkRequest): Promise<StkRequestRow> {
  await db.query(sql.unsafe`
    INSERT INTO mpesa_stk_requests (link_id, attempt, store_id, environment, phone_number, amount_kes, business_short_code, party_b, callback_token_hash, state)
    VALUES (${r.link_id}, ${r.attempt}, ${r.store_id}, ${r.environment}, ${r.phone_number}, ${r.amount_kes},
            ${r.business_short_code}, ${r.party_b}, ${sql.binary(r.callback_token_hash)}, 'sending')
    ON CONFLICT (link_id, attempt) DO NOTHING`);
  return (await findStkRequest(db, r.link_id, r.attempt))!;
}

/**
 * Binds the CheckoutRequestID Daraja gave us. Also accepted for a prompt whose outcome was
 * unknown: its callback (which carries our unguessable token) proves it did reach Daraja.
 */
export async function markStkSent(db: CommonQueryMethods, linkId: string, attempt: string, ids: { checkoutRequestId: string; merchantRequestId: string }): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE mpesa_stk_requests SET state = 'sent', checkout_request_id = ${ids.checkoutRequestId},
      merchant_request_id = ${ids.merchantRequestId}, updated_at = now()
    WHERE link_id = ${linkId} AND attempt = ${attempt} AND state IN ('sending', 'unknown')`);
}

export async function markStkFailed(
  db: CommonQueryMethods,
  linkId: string,
  attempt: string,
  f: { state: 'rejected' | 'unknown'; type: string; message: string },
): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE mpesa_stk_requests SET state = ${f.state}, failure_type = ${f.type}, failure_message = ${f.message}, updated_at = now()
    WHERE link_id = ${linkId} AND attempt = ${attempt} AND state = 'sending'`);
}

/** Frees the slot after an answer that proves nothing was sent, so the activity's retry sends afresh. */
export async function releaseStkRequest(db: CommonQueryMethods, linkId: string, attempt: string): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM mpesa_stk_requests WHERE link_id = ${linkId} AND attempt = ${attempt} AND state = 'sending'`);
}

const callbackRow = z.object({
  id: z.string(),
  checkout_request_id: z.string(),
  merchant_request_id: z.string(),
  result_code: z.string(),
  result_desc: z.string(),
  receipt: z.string().nullable(),
  amount_kes: z.string().nullable(),
  phone_number: z.string().nullable(),
  transaction_at: z.string().nullable(),
  received_at: z.string(),
  suspicious_reason: z.string().nullable(),
});
export type CallbackRow = z.infer<typeof callbackRow>;
export type NewCallback = Omit<CallbackRow, 'id' | 'received_at'> & { fingerprint: string; body: unknown };

const callbackColumns = sql.fragment`id::text, checkout_request_id, merchant_request_id, result_code, result_desc, receipt,
  amount_kes::text, phone_number, transaction_at, received_at, suspicious_reason`;

/** Distinct callbacks kept per prompt; past this, more are refused (a flood is not evidence). */
export const maxCallbacksPerPrompt = 20;

/**
 * Stores a callback unless the same one (same fingerprint) is already stored for that prompt, or
 * the prompt already holds `maxCallbacksPerPrompt`. Every distinct callback is kept: a forged one
 * that came first must not hide the genuine one. `stored` is false for a repeat or past the bound.
 */
export async function recordCallback(db: CommonQueryMethods, c: NewCallback): Promise<{ stored: boolean }> {
  const inserted = await db.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    INSERT INTO mpesa_callbacks (checkout_request_id, merchant_request_id, result_code, result_desc, receipt, amount_kes, phone_number,
      transaction_at, body, fingerprint, suspicious_reason)
    SELECT ${c.checkout_request_id}, ${c.merchant_request_id}, ${c.result_code}, ${c.result_desc}, ${c.receipt},
           ${c.amount_kes}, ${c.phone_number}, ${c.transaction_at}, ${sql.jsonb(c.body as never)}, ${c.fingerprint}, ${c.suspicious_reason}
    WHERE (SELECT count(*) FROM mpesa_callbacks WHERE checkout_request_id = ${c.checkout_request_id}) < ${maxCallbacksPerPrompt}
    ON CONFLICT (checkout_request_id, fingerprint) DO NOTHING
    RETURNING id::text`);
  return { stored: inserted !== null };
}

/** Every stored callback of one prompt, oldest first. */
export async function listCallbacks(db: CommonQueryMethods, checkoutRequestId: string): Promise<CallbackRow[]> {
  return [...(await db.any(sql.type(callbackRow)`
    SELECT ${callbackColumns} FROM mpesa_callbacks WHERE checkout_request_id = ${checkoutRequestId} ORDER BY id`))];
}

/** Marks callbacks as not believed, keeping the first reason given for each. */
export async function markCallbacksSuspicious(db: CommonQueryMethods, ids: string[], reason: string): Promise<void> {
  if (ids.length === 0) return;
  await db.query(sql.unsafe`
    UPDATE mpesa_callbacks SET suspicious_reason = ${reason}
    WHERE id = ANY(${sql.array(ids, 'int8')}) AND suspicious_reason IS NULL`);
}

/**
 * A prompt's receipt is disputed (two believable callbacks name different receipts): the confirmed
 * payment, and the link it paid, show the CheckoutRequestID instead of either receipt. Only the
 * receipt changes, never the amount or the state. `rail`: M-Pesa's rail id (its facts). Returns
 * whether anything was shown before.
 */
export async function withdrawDisputedReceipt(db: CommonQueryMethods, rail: string, checkoutRequestId: string): Promise<boolean> {
  const changed = await db.maybeOneFirst(sql.type(z.object({ link_id: z.string() }))`
    WITH old AS (
      SELECT link_id, external_id FROM link_payments
      WHERE payment_key = ${checkoutRequestId} AND rail = ${rail} AND state = 'confirmed' AND external_id IS DISTINCT FROM payment_key
      FOR UPDATE),
    links AS (
      UPDATE payment_links l SET external_id = ${checkoutRequestId}, updated_at = now(), version = l.version + 1
      FROM old WHERE l.id = old.link_id AND l.confirmed_rail = ${rail} AND l.external_id = old.external_id)
    UPDATE link_payments p SET external_id = p.payment_key, updated_at = now()
    FROM old WHERE p.link_id = old.link_id AND p.payment_key = ${checkoutRequestId}
    RETURNING p.link_id`);
  return changed !== null;
}

/** Prompts recorded for a phone since `since` (any link, any store): the per-phone bound. */
export async function countRecentPrompts(db: CommonQueryMethods, phoneNumber: string, since: Date): Promise<number> {
  return db.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM mpesa_stk_requests WHERE phone_number = ${phoneNumber} AND created_at >= ${since.toISOString()}`);
}

/** The connected shortcode of a store in an environment, or null (what a new link shows customers). */
export async function findShortcode(db: CommonQueryMethods, storeId: string, environment: Environment): Promise<string | null> {
  return db.maybeOneFirst(sql.type(z.object({ shortcode: z.string() }))`
    SELECT shortcode FROM mobile_money_connections WHERE store_id = ${storeId} AND environment = ${environment}`);
}
