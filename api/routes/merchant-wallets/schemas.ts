import { z } from 'zod/v4';
import { environments } from '../../../domain/environment.js';
import { railIdSchema } from '../../rail-schema.js';

export const clientParams = z.object({ clientId: z.string().describe('The store id (cli_…) of the key') });

const network = z.enum(['TRON', 'EVM', 'SOLANA']);

export const connectedWalletSchema = z
  .object({
    ok: z.literal(true),
    network,
    environment: z.enum(environments),
    firstAddress: z.string().describe('Receive address at index 0 (<xpub>/0/0), or the Solana wallet itself: check it against your wallet'),
    firstAddressPath: z.string().nullable().describe("Full path of firstAddress, e.g. m/44'/60'/0'/0/0; null for Solana"),
    rails: z.array(railIdSchema()).describe('Rails this wallet makes available'),
  })
  .meta({ id: 'ConnectedWallet' });

export const disconnectedWalletSchema = z
  .object({ ok: z.literal(true), network, environment: z.enum(environments), rails: z.array(railIdSchema()) })
  .meta({ id: 'DisconnectedWallet' });
