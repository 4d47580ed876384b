import { describe, expect, it } from '@jest/globals';
import { railIds } from '../../domain/rails.js';
import { workflowTypes } from '../../domain/workflow-contract.js';
import { methodOf } from '../../rails/methods.js';
import { linkRailTerms, railFacts, railOfNetwork, usdtNetworks, usdtRails } from '../../rails/registry.js';
import { invoiceNetworks } from '../../services/invoices/dto.js';
import * as workflows from '../../workflows/index.js';

describe('the rail registry', () => {
  it('holds every rail id once, each under its own id', () => {
    expect(Object.keys(railFacts).sort()).toEqual([...railIds].sort());
    for (const id of railIds) expect(railFacts[id].id).toBe(id);
  });

  it('gives every USDT rail a network name, endpoints for both environments and a poll interval', () => {
    for (const rail of usdtRails) {
      const f = railFacts[rail];
      expect(f.network).toMatch(/^[A-Z]+$/);
      expect(Object.keys(f.endpoints).sort()).toEqual(['live', 'test']);
      expect(f.endpoints.live.usdtContract).toBeTruthy();
      expect(f.pollMs).toBeGreaterThan(0);
    }
    expect(new Set(usdtNetworks).size).toBe(usdtRails.length);
    expect(railOfNetwork('POLYGON')).toBe('USDT_POLYGON');
  });

  it("gives the link workflow each rail's terms, prompted exactly where the method receives by a prompt", () => {
    for (const id of railIds) {
      expect(linkRailTerms(id)).toEqual({ decimals: railFacts[id].decimals, currency: railFacts[id].tokenSymbol, prompted: methodOf(id).receives === 'prompt' });
    }
    expect(linkRailTerms('USDT_NOPE' as never)).toBeUndefined();
  });

  it('names exactly the invoice networks the API accepts', () => {
    expect([...invoiceNetworks].sort()).toEqual([...usdtNetworks].sort());
  });
});

describe('the workflow contract', () => {
  it('names only workflow types the worker registers', () => {
    for (const type of Object.values(workflowTypes)) expect(typeof (workflows as Record<string, unknown>)[type]).toBe('function');
  });
});
