import { describe, expect, it } from '@jest/globals';
import { readOnlySettings, uiRequestAllowed } from '../../runtime/read-only-ui.js';

describe('the embedded Temporal UI, read-only', () => {
  it('lets reads and workflow queries through', () => {
    expect(uiRequestAllowed('GET', '/api/v1/namespaces/default/workflows?query=x')).toBe(true);
    expect(uiRequestAllowed('HEAD', '/')).toBe(true);
    expect(uiRequestAllowed('OPTIONS', '/api/v1/settings')).toBe(true);
    expect(uiRequestAllowed('POST', '/api/v1/namespaces/default/workflows/payment-link%2Fpl_1/query/status')).toBe(true);
  });

  it('refuses every write: cancel, terminate, signal, reset, update, batch, schedules, and dot-segment tricks', () => {
    for (const [method, path] of [
      ['POST', '/api/v1/namespaces/default/workflows/payment-link%2Fpl_1/cancel'],
      ['POST', '/api/v1/namespaces/default/workflows/payment-link%2Fpl_1/terminate'],
      ['POST', '/api/v1/namespaces/default/workflows/payment-link%2Fpl_1/signal/cancel'],
      ['POST', '/api/v1/namespaces/default/workflows/payment-link%2Fpl_1/reset'],
      ['POST', '/api/v1/namespaces/default/workflows/payment-link%2Fpl_1/update/confirm'],
      ['POST', '/api/v1/namespaces/default/batch-operations/b1'],
      ['DELETE', '/api/v1/namespaces/default/schedules/s1'],
      ['PUT', '/api/v1/namespaces/default'],
      ['POST', '/api/v1/namespaces/default/workflows/x/query/y/../../terminate'],
      ['POST', '/api/v1/namespaces/default/workflows/x/query/%2e%2e/terminate'],
      ['POST', '//api/v1/namespaces/default/workflows/x/terminate'],
      ['POST', '/anything-else'],
    ] as const) expect([method, path, uiRequestAllowed(method, path)]).toEqual([method, path, false]);
  });

  it('turns every write switch of the settings off and keeps the rest', () => {
    expect(readOnlySettings({ DisableWriteActions: false, BatchActionsDisabled: false, WorkflowTerminateDisabled: false, WorkflowResetDisabled: false, DefaultNamespace: 'default', Codec: { Endpoint: '' } }))
      .toEqual({ DisableWriteActions: true, BatchActionsDisabled: true, WorkflowTerminateDisabled: true, WorkflowResetDisabled: true, DefaultNamespace: 'default', Codec: { Endpoint: '' } });
  });
});
