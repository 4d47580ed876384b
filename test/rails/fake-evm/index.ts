import type { RailRegistration } from '../../../rails/register.js';
import { fakeEvmAdapter } from './adapter.js';
import { fakeEvmFacts } from './facts.js';
import { fakeEvmMethod } from './method.js';

/** What a composition root hands `registerRail` (rails/register.ts) to add the fake rail. */
export const fakeEvmRail: RailRegistration = { facts: fakeEvmFacts, method: fakeEvmMethod, adapter: fakeEvmAdapter };
