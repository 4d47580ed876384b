import { newId, type IdKind } from '../domain/ids.js';

/** Ids of the objects a request creates (the API reserves them on an Idempotency-Key). */
export interface RequestIds {
  /** The id of the request's new object of `kind`: reserved on the Idempotency-Key if there is one. */
  idFor(kind: IdKind): Promise<string>;
  /** True when every id is new (no Idempotency-Key): no earlier attempt can have written under it. */
  readonly fresh?: boolean;
}

/** Without an Idempotency-Key: every object gets a new id. */
export const freshIds: RequestIds = { idFor: async (kind) => newId(kind), fresh: true };
