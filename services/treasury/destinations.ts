import { findDestination, insertDestination, listDestinations, removeDestination, type DestinationRow } from '../../db/sweep-destination-repo.js';
import { AppError } from '../../domain/errors.js';
import { isId, newId } from '../../domain/ids.js';
import type { UsdtRail } from '../../domain/rails.js';
import { adapterOf } from '../../rails/adapters.js';
import { railFacts } from '../../rails/registry.js';
import type { ServiceDeps } from '../deps.js';
import type { StoreScope } from '../scope.js';
import { parseTreasuryRail } from './balances.js';

/**
 * Sweep destinations (docs/treasury.md): the per-store allowlist a sweep may send money to. Only
 * the dashboard's owner actions call `addSweepDestination` and `removeSweepDestination` (no API
 * route does), and a new destination is usable only after the configured delay, so a leaked
 * secret key, or a session taken over for a moment, cannot redirect funds.
 */
export interface SweepDestinationDto {
  id: string;
  rail: string;
  address: string;
  label: string;
  createdAt: string;
  /** When it becomes (or became) usable. */
  usableAt: string;
  usable: boolean;
}

const dto = (r: DestinationRow): SweepDestinationDto => ({ id: r.id, rail: r.rail, address: r.address, label: r.label, createdAt: r.created_at, usableAt: r.usable_at, usable: r.usable });

/** The rail's destination parser; a 400 for a rail whose treasury moves nothing. */
function parserOf(rail: UsdtRail): (raw: string) => string | null {
  const t = adapterOf(rail).treasury;
  if (t?.kind !== 'holdings') throw new AppError('invalid_field', `${railFacts[rail].displayName} has nothing to sweep, so it takes no destination.`, 'rail');
  return (raw) => t.parseDestination(raw);
}

export async function addSweepDestination(
  deps: Pick<ServiceDeps, 'pool' | 'config'>,
  scope: StoreScope,
  addedBy: string,
  input: { rail: string; address: string; label: string },
): Promise<SweepDestinationDto> {
  const rail = parseTreasuryRail(input.rail);
  const address = parserOf(rail)(input.address);
  if (address === null) throw new AppError('invalid_field', `Enter a ${railFacts[rail].network ?? rail} address (not the zero address).`, 'address');
  const label = input.label.trim();
  if (label.length > 100) throw new AppError('invalid_field', 'A label has at most 100 characters.', 'label');
  const row = await insertDestination(deps.pool, {
    id: newId('sweepDestination'), storeId: scope.storeId, environment: scope.environment, rail, address, label, addedBy,
    delaySeconds: deps.config.treasuryDestinationDelaySeconds,
  });
  if (!row) throw new AppError('invalid_field', 'This address is already a destination of this rail.', 'address');
  return dto(row);
}

export async function listSweepDestinations(deps: Pick<ServiceDeps, 'pool'>, scope: StoreScope): Promise<SweepDestinationDto[]> {
  return (await listDestinations(deps.pool, scope.storeId, scope.environment)).map(dto);
}

export async function removeSweepDestination(deps: Pick<ServiceDeps, 'pool'>, scope: StoreScope, id: string, removedBy: string): Promise<void> {
  // A string that is no destination id (a NUL, another prefix) is no destination, and never reaches the database.
  if (!isId('sweepDestination', id) || !(await removeDestination(deps.pool, scope.storeId, scope.environment, id, removedBy))) {
    throw new AppError('not_found', 'No such sweep destination.');
  }
}

/**
 * What a sweep plan asks before using `address` on `rail`: refused (with the error shape) when it
 * is not on the allowlist or its delay has not passed. Answers the destination.
 */
export async function usableSweepDestination(deps: Pick<ServiceDeps, 'pool'>, scope: StoreScope, rail: UsdtRail, raw: string): Promise<SweepDestinationDto> {
  const address = parserOf(rail)(raw);
  if (address === null) throw new AppError('invalid_field', `Invalid 'destination': not a ${railFacts[rail].network ?? rail} address.`, 'destination');
  const row = await findDestination(deps.pool, scope.storeId, scope.environment, rail, address);
  if (!row) throw new AppError('invalid_field', "Invalid 'destination': not on the store's sweep destinations; an owner adds it in the dashboard (Treasury).", 'destination');
  if (!row.usable) throw new AppError('invalid_state', `The destination is usable from ${row.usable_at} (a new destination waits before use).`, 'destination');
  return dto(row);
}
