/**
 * Daraja's clock. Timestamps are `YYYYMMDDHHmmss` in Kenyan time: East Africa Time is UTC+3 all
 * year (Kenya observes no daylight saving time), so a fixed offset is exact and does
 * not depend on the host's time zone or ICU data. Servers outside Kenya that sent UTC here are
 * the classic cause of "Invalid Timestamp" (research/daraja.md, section 8).
 */
const eatOffsetMs = 3 * 60 * 60 * 1000;

export function darajaTimestamp(at: Date): string {
  const eat = new Date(at.getTime() + eatOffsetMs);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return (
    pad(eat.getUTCFullYear(), 4) +
    pad(eat.getUTCMonth() + 1) +
    pad(eat.getUTCDate()) +
    pad(eat.getUTCHours()) +
    pad(eat.getUTCMinutes()) +
    pad(eat.getUTCSeconds())
  );
}

/**
 * Reads a Daraja `YYYYMMDDHHmmss` (a string, or the number a callback's TransactionDate is sent
 * as) as Kenyan time. Returns null for anything that is not a real calendar time.
 */
export function parseDarajaTimestamp(value: string | number): Date | null {
  const text = String(value);
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const utcMs = Date.UTC(y, mo - 1, d, h, mi, s) - eatOffsetMs;
  // Date.UTC rolls 2024-02-30 over into March; formatting back catches any such impossible date.
  if (darajaTimestamp(new Date(utcMs)) !== text) return null;
  return new Date(utcMs);
}
