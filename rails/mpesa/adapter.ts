import type { RailAdapter } from '../payment-method.js';
import { mpesaMethod } from './method.js';

/**
 * M-Pesa's adapter: its rules (method.ts). Its prompt flow (STK Push, callback, STK Push Query)
 * runs through the mobile-money activities and services over daraja-client.ts and
 * merchant-session.ts in this folder; nothing is scanned, no balance is read.
 */
export const mpesaAdapter: RailAdapter = { ...mpesaMethod };
