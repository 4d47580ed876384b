import { randomBytes, randomInt } from 'node:crypto';
import { nairobiNow } from './checks.js';
import { callbackBody, resultOf, type CallbackResult } from './templates.js';

/** A shortcode the emulator knows, with the Daraja app (key/secret) that may use it. */
export interface EmulatorMerchant {
  consumerKey: string;
  consumerSecret: string;
  /** BusinessShortCode: the paybill, or the store number of a till. */
  shortCode: string;
  passkey: string;
  kind: 'paybill' | 'till';
  /** Till numbers under a store (PartyB for CustomerBuyGoodsOnline). */
  tills?: string[];
}

/** How the prompt on one phone ends: the result, and how its callback is delivered. */
export interface PhoneScript {
  result: CallbackResult;
  /** 'none': Daraja never calls back (it happens); 'duplicate': the callback comes twice. */
  callback: 'once' | 'none' | 'duplicate';
  /** Holds the STK push answer this long (a slow operator). */
  responseDelayMs?: number;
}

export interface Prompt {
  merchantRequestId: string;
  checkoutRequestId: string;
  merchant: EmulatorMerchant;
  phone: string;
  amount: number;
  callbackUrl: string;
  /** The request body exactly as received. */
  request: Record<string, unknown>;
  /** Set when PartyB or TransactionType do not fit the shortcode: Daraja accepts, then fails the payment. */
  misconfigured: { code: number | string; desc: string } | null;
  state: 'open' | 'settled';
  result: { code: string; desc: string } | null;
  receipt: string | null;
  deliveries: { status: number | null; error?: string }[];
}

const digits = (n: number) => Array.from({ length: n }, () => randomInt(10)).join('');
const upperAlnum = (n: number) => Array.from(randomBytes(n), (b) => 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'[b % 36]).join('');
export const newRequestId = () => `${digits(5)}-${digits(8)}-1`;

export type DarajaFailure = 'spike_arrest' | 'drop_connection' | 'lose_answer';

/** The emulator's memory: tokens, open and settled prompts, phone scripts. */
export class DarajaState {
  readonly prompts = new Map<string, Prompt>();
  readonly scripts = new Map<string, PhoneScript>();
  /** Injected failures, in order; one with a path fails only a call to that path. */
  readonly failures: { kind: DarajaFailure; path?: string }[] = [];
  private readonly tokens = new Map<string, { consumerKey: string; expiresAtMs: number }>();
  private readonly currentToken = new Map<string, string>();

  constructor(
    readonly merchants: EmulatorMerchant[],
    readonly tokenTtlSeconds: number,
    readonly now: () => Date,
  ) {}

  app(consumerKey: string, consumerSecret: string): boolean {
    return this.merchants.some((m) => m.consumerKey === consumerKey && m.consumerSecret === consumerSecret);
  }

  /** Daraja: "each request invalidates the previous token" of that app. */
  issueToken(consumerKey: string): string {
    const token = randomBytes(21).toString('base64').replace(/[^A-Za-z0-9]/g, '').slice(0, 28);
    this.tokens.set(token, { consumerKey, expiresAtMs: this.now().getTime() + this.tokenTtlSeconds * 1000 });
    this.currentToken.set(consumerKey, token);
    return token;
  }

  tokenValid(authorization: string | undefined): boolean {
    const m = /^Bearer (\S+)$/.exec(authorization ?? '');
    const t = m ? this.tokens.get(m[1]!) : undefined;
    return !!t && t.expiresAtMs > this.now().getTime() && this.currentToken.get(t.consumerKey) === m![1];
  }

  revokeTokens(): void {
    this.tokens.clear();
  }

  merchant(shortCode: string): EmulatorMerchant | undefined {
    return this.merchants.find((m) => m.shortCode === shortCode);
  }

  openPromptFor(phone: string): Prompt | undefined {
    return [...this.prompts.values()].find((p) => p.phone === phone && p.state === 'open');
  }

  script(phone: string): PhoneScript {
    return this.scripts.get(phone) ?? { result: 'success', callback: 'once' };
  }

  newPrompt(p: Omit<Prompt, 'merchantRequestId' | 'checkoutRequestId' | 'state' | 'result' | 'receipt' | 'deliveries'>): Prompt {
    // ws_CO_ + DDMMYYYYHHmmss + milliseconds + MSISDN, as Daraja forms them.
    const eat = nairobiNow(this.now());
    const ddmmyyyy = eat.slice(6, 8) + eat.slice(4, 6) + eat.slice(0, 4);
    const checkoutRequestId = `ws_CO_${ddmmyyyy}${eat.slice(8)}${digits(3)}${p.phone}`;
    const merchantRequestId = `${upperAlnum(4).toLowerCase()}-${upperAlnum(4).toLowerCase()}-${upperAlnum(4).toLowerCase()}-${upperAlnum(16).toLowerCase()}${digits(6)}`;
    const prompt: Prompt = { ...p, merchantRequestId, checkoutRequestId, state: 'open', result: null, receipt: null, deliveries: [] };
    this.prompts.set(checkoutRequestId, prompt);
    return prompt;
  }

  /** Ends an open prompt (the customer acted, or the phone timed out) and returns its callback body. */
  settle(prompt: Prompt, result: CallbackResult): ReturnType<typeof callbackBody> {
    const receipt = upperAlnum(10);
    const body = callbackBody(
      result,
      { ...prompt, receipt, transactionDate: nairobiNow(this.now()) },
      prompt.misconfigured ?? undefined,
    );
    prompt.state = 'settled';
    prompt.result = resultOf(body);
    prompt.receipt = prompt.result.code === '0' ? receipt : null;
    return body;
  }
}
