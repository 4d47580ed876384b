import { z } from 'zod/v4';

/**
 * Daraja's Pull Transactions API (a reconciliation API: the C2B payments of a shortcode within the
 * last 48 hours, whether or not their confirmation reached us). Register once per shortcode, then
 * query windows of `YYYY-MM-DD HH:mm:ss` (Kenyan time), paged by OffSetValue. Pure: no I/O here.
 */
export const pullRegisterPath = '/pulltransactions/v1/register';
export const pullQueryPath = '/pulltransactions/v1/query';
/** How far back Daraja lets a query reach. */
export const pullReachMs = 48 * 60 * 60 * 1000;

const eatOffsetMs = 3 * 60 * 60 * 1000;
/** A Pull Transactions date: `YYYY-MM-DD HH:mm:ss` in Kenyan time (UTC+3, no daylight saving). */
export function pullDate(at: Date): string {
  return new Date(at.getTime() + eatOffsetMs).toISOString().slice(0, 19).replace('T', ' ');
}

export interface PullRegisterBody {
  ShortCode: string;
  RequestType: 'Pull';
  NominatedNumber: string;
  CallBackURL: string;
}

export interface PullQueryBody {
  ShortCode: string;
  StartDate: string;
  EndDate: string;
  OffSetValue: string;
}

const text = z.union([z.string(), z.number()]).transform((v) => String(v));
/** One record as the query lists it (unknown fields kept). */
export const pulledRecordSchema = z.looseObject({
  transactionId: text.pipe(z.string().regex(/^[A-Z0-9]{6,20}$/)),
  trxDate: text.optional().nullable(),
  msisdn: text.optional().nullable(),
  sender: text.optional().nullable(),
  transactiontype: text.optional().nullable(),
  billreference: text.optional().nullable(),
  amount: text.pipe(z.string().regex(/^\d{1,9}(\.\d{1,2})?$/)),
  organizationname: text.optional().nullable(),
});
export type PulledRecord = z.infer<typeof pulledRecordSchema>;

/**
 * The query answer: `Response` is a list holding one list of records (Daraja nests it). An empty
 * window may come as `[[]]`, `[]` or no `Response`. Records that do not parse are returned apart.
 */
export function parsePullAnswer(json: unknown): { ok: true; records: PulledRecord[]; malformed: unknown[] } | { ok: false; problem: string } {
  const b = json as { ResponseCode?: unknown; ResponseMessage?: unknown; Response?: unknown } | null;
  if (!b || typeof b !== 'object') return { ok: false, problem: 'the answer is not JSON' };
  if (String(b.ResponseCode) !== '1000' && String(b.ResponseCode) !== '0') return { ok: false, problem: `ResponseCode ${String(b.ResponseCode)}: ${String(b.ResponseMessage ?? '')}` };
  const outer = Array.isArray(b.Response) ? b.Response : [];
  const flat: unknown[] = outer.flatMap((x: unknown) => (Array.isArray(x) ? x : [x]));
  const records: PulledRecord[] = [];
  const malformed: unknown[] = [];
  for (const r of flat) {
    const parsed = pulledRecordSchema.safeParse(r);
    if (parsed.success) records.push(parsed.data);
    else malformed.push(r);
  }
  return { ok: true, records, malformed };
}

/** Whether a pulled record agrees with a stored confirmation: TransID, amount (whole shillings), shortcode and reference. */
export function pullAgreesWith(
  record: PulledRecord,
  row: { trans_id: string; amount: string; shortcode: string; bill_ref: string | null },
  shortcode: string,
): boolean {
  const shillings = (v: string) => (/^\d+(\.0{1,2})?$/.test(v) ? String(BigInt(v.split('.')[0]!)) : v);
  const ref = (v: string | null | undefined) => (v ?? '').trim().toUpperCase();
  return record.transactionId === row.trans_id && shillings(record.amount) === shillings(row.amount) && row.shortcode === shortcode && ref(record.billreference) === ref(row.bill_ref);
}
