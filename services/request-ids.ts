import { newId, type IdKind } from '../domain/ids.js';

/** Ids of the objects a request creates (the API reserves them on an Idempotency-Key). */
export interface RequestIds {
  /** The id of the request's new object of `kind`: reserved on the Idempotency-Key if there is one. */
  idFor(kind: IdKind): Promise<string>;
  /** True when every id is new (no Idempotency-Key): no earlier attempt can have written under it. */
  readonly fresh?: boolean;
  /**
   * The id that follows what this request starts through logs, traces and workflows: the API's
   * request id. What the request creates keeps it for life (docs/tracing.md); none, a new one.
   */
  readonly correlationId?: string;
}

/** `ids` carrying the request's correlation id. */
export function correlatedIds(ids: RequestIds, correlationId: string): RequestIds {
  return { idFor: ids.idFor, fresh: ids.fresh, correlationId };
}

/** Without an Idempotency-Key: every object gets a new id. */
export const freshIds: RequestIds = { idFor: async (kind) => newId(kind), fresh: true };
