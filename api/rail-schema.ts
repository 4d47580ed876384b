import { z } from 'zod/v4';
import { railIds, type RailId } from '../domain/rails.js';
import { allRails, isRailId } from '../rails/registry.js';

/**
 * A rail id in a request or response: checked against the rails of this process when parsed
 * (built-in and registered at boot: rails/register.ts), so a rail registered after the schemas
 * were built is accepted. OpenAPI documents the built-in rails' enum, as `z.enum` would: the
 * reference describes the product, not one deployment's extra rails. A new instance per use, so
 * OpenAPI inlines it where `z.enum` was.
 */
export function railIdSchema(): z.ZodType<RailId> {
  return z
    .string()
    .refine(isRailId, { error: () => `Invalid option: expected one of ${allRails().map((r) => JSON.stringify(r)).join('|')}` })
    .meta({ type: 'string', enum: [...railIds] }) as unknown as z.ZodType<RailId>;
}
