import { Client, Connection } from '@temporalio/client';
import { saveHistories } from './evidence.js';

/** Every history on the run's shared dev server, decoded, for the secret scan. */
export async function saveDevServerHistories(dir: string): Promise<number> {
  const address = process.env.MALIPO_TEST_TEMPORAL_ADDRESS;
  if (!address) return 0;
  const connection = await Connection.connect({ address });
  try {
    return await saveHistories(new Client({ connection, namespace: 'default' }), dir);
  } finally {
    await connection.close();
  }
}
