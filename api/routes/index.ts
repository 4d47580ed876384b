import type { RouteDef } from '../route.js';
import { listClientChains } from './chains/for-client.js';
import { listChains } from './chains/list.js';
import { health } from './system/health.js';
import { openapi } from './system/openapi.js';

/** Every API operation, in the order the OpenAPI document lists them. */
export const allRoutes: RouteDef[] = [listChains, listClientChains, health, openapi] as unknown as RouteDef[];
