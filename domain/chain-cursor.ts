/** Where a chain watcher has scanned to: the last block it finished, and that block's hash (to see a reorg). */
export interface Cursor {
  number: string;
  hash: string | null;
}
