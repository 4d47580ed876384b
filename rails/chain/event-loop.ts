/**
 * Resolves after one turn of the event loop (`setImmediate`): bulk work on the serving thread
 * (deriving a batch of addresses, reading balances in chunks, a pass over tables) awaits it
 * between pieces, so requests and timers waiting meanwhile run before the next piece.
 */
export const nextTurn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));
