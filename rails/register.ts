import type { RailId } from '../domain/rails.js';
import { addRailAdapter } from './adapters.js';
import type { RailFacts } from './facts.js';
import { addPaymentMethod } from './methods.js';
import type { PaymentMethod, RailAdapter } from './payment-method.js';
import { addRailFacts, isRailId, railSetSealed } from './registry.js';

/** A rail added at boot: its facts (any id not taken), its family's method and adapter. */
export interface RailRegistration {
  facts: Omit<RailFacts, 'id'> & { id: string };
  method: PaymentMethod;
  adapter: RailAdapter;
}

/**
 * The extension point of the rail set: a composition root (a deployment's own entry point, or a
 * test) adds a rail of its own family, or of a built-in one, before the process reads its
 * configuration (`loadConfig` seals the set). From then on the rail is what every built-in rail
 * is: an id the API accepts and lists (GET /v1/chains), available by its store connection,
 * configured by `RPC_URL_<RAIL>_<ENV>` and its siblings, scanned by its adapter, and paid through
 * the link workflow, which reads what it needs of the rail from its start input. The built-in
 * rails are not registered: they are the registry's own lines. docs/adding-a-rail.md walks
 * through one (test/rails/fake-evm/).
 */
export function registerRail(r: RailRegistration): RailId {
  if (r.method.family !== r.facts.family || r.adapter.family !== r.facts.family) {
    throw new Error(`rail ${r.facts.id}: its facts, method and adapter must name one family`);
  }
  if (railSetSealed()) throw new Error(`rail ${r.facts.id} registered after the rail set was sealed (register rails before loadConfig)`);
  if (isRailId(r.facts.id)) throw new Error(`rail ${r.facts.id} is registered already`);
  addPaymentMethod(r.method);
  addRailAdapter(r.adapter);
  addRailFacts(r.facts as RailFacts);
  return r.facts.id as RailId;
}
