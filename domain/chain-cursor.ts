/**
 * Where a chain watcher stands. `number` and `hash`: the last block it will not read again (final,
 * and read completely by two ticks: rails/chain/README.md), with its hash to see a reorganisation.
 * `scannedTo`: the last block of the latest complete read; the blocks after `number` up to it were
 * read by an earlier tick, so the next one may pass them. Absent or null when there is none (a
 * watcher that has just started or rewound). Solana's cursor is only the slot of its last tick.
 */
export interface Cursor {
  number: string;
  hash: string | null;
  scannedTo?: string | null;
}
