import { describe, expect, it } from '@jest/globals';
import { redactUrl } from '../../api/plugins/log-redaction.js';

/** URLs as the request log writes them: bearer secrets in a path, and query values, never appear. */
describe('redactUrl', () => {
  it.each([
    ['/v1/callbacks/mpesa/AbC123token', '/v1/callbacks/mpesa/[redacted]'],
    ['/dashboard/invitations/4Jx0q_Y-abcdefghijklmnopqrstuvwxyzABCDEFGHI', '/dashboard/invitations/[redacted]'],
    ['/dashboard/invitations/4Jx0q_Y-abc?x=1', '/dashboard/invitations/[redacted]?x=[redacted]'],
    ['/v1/payment-links/pl_abc?pk=pk_test_secretish', '/v1/payment-links/pl_abc?pk=[redacted]'],
    ['/dashboard/team/invitations/0123456789abcdef/cancel', '/dashboard/team/invitations/0123456789abcdef/cancel'],
  ])('%s → %s', (url, logged) => {
    expect(redactUrl(url)).toBe(logged);
  });
});
