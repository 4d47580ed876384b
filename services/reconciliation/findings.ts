import { listFindings } from '../../db/reconciliation-repo.js';
import type { FindingStatus } from '../../domain/reconciliation.js';
import type { ServiceDeps } from '../deps.js';
import type { StoreScope } from '../scope.js';
import { findingDto, type FindingDto } from './dto.js';

/** The scope's reconciliation findings, newest first (the API and the dashboard both read them here). */
export async function listReconciliationFindings(
  deps: Pick<ServiceDeps, 'pool'>,
  scope: StoreScope,
  q: { status?: FindingStatus; limit: number },
): Promise<FindingDto[]> {
  return (await listFindings(deps.pool, scope, q)).map(findingDto);
}
