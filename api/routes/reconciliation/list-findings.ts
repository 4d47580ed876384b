import { z } from 'zod/v4';
import { environments } from '../../../domain/environment.js';
import type { FindingDto } from '../../../services/reconciliation/dto.js';
import { listReconciliationFindings } from '../../../services/reconciliation/findings.js';
import { defineRoute } from '../../route.js';
import type { Same } from '../../schema-types.js';

const amount = (what: string) => z.string().describe(`${what}, a decimal string in USDT`);

export const findingSchema = z
  .object({
    id: z.string().describe('Finding id, rcf_…'),
    kind: z.enum(['mismatch', 'outflow', 'unmatched_payment', 'unverified_payment']).describe('mismatch: more on chain than the recorded deposits explain; outflow: less (money moved out); unmatched_payment: an M-Pesa payment found by Pull Transactions that names no link (address: <shortcode>:<TransID>); unverified_payment: an M-Pesa confirmation waiting for corroboration (c2bSettlesAlone false) that Pull Transactions can no longer give: older than its 48-hour reach, or the store is not registered for Pull (address: <shortcode>:<TransID>, owner: its link, difference: its amount in KES)'),
    status: z.enum(['open', 'resolved', 'noted']).describe('A mismatch is open until the ledger explains it, then resolved; an outflow is noted'),
    environment: z.enum(environments),
    network: z.string().describe('TRON, BSC, ETH or POLYGON'),
    address: z.string(),
    owner: z.object({
      type: z.enum(['payment_link', 'invoice', 'derived']),
      id: z.string().nullable().describe('The payment link or invoice id; null for a derived address'),
      index: z.number().int().nullable().describe('The receive index of a derived address; null otherwise'),
    }),
    balance: amount('The token balance on chain at blockNumber'),
    recorded: amount('The deposits recorded for the address up to blockNumber'),
    expected: amount('What the balance should be: recorded deposits, plus an opening balance, less earlier outflows'),
    difference: amount('Mismatch: the amount no recorded deposit explains; outflow: the amount that left'),
    blockNumber: z.number().int().describe('The height the balance was read at'),
    createdAt: z.string(),
    updatedAt: z.string(),
    resolvedAt: z.string().nullable(),
  })
  .meta({ id: 'ReconciliationFinding' });

export const listReconciliationFindingsRoute = defineRoute({
  method: 'GET',
  url: '/v1/reconciliation/findings',
  operationId: 'listReconciliationFindings',
  summary: "What the reconciler found on the key's store's addresses that the ledger did not explain, newest first",
  tags: ['Reconciliation'],
  auth: 'secret',
  query: z.strictObject({
    status: z.enum(['open', 'resolved', 'noted']).optional().describe('Only findings in this status'),
    limit: z.coerce.number().int().min(1).max(100).default(50).describe('At most this many findings (1..100, default 50)'),
  }),
  responses: { 200: { description: 'Findings', schema: z.object({ data: z.array(findingSchema) }) } },
  handler: async ({ deps, auth, query }) => ({ data: await listReconciliationFindings(deps, auth, query) }),
});

// The schema describes exactly what the service returns (services/reconciliation/dto.ts).
true satisfies Same<z.infer<typeof findingSchema>, FindingDto>;
