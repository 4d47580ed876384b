/** Daraja's STK push endpoints (paths under the sandbox or live base URL). */
export const stkPushPath = '/mpesa/stkpush/v1/processrequest';
export const stkQueryPath = '/mpesa/stkpushquery/v1/query';

/** Our callback URL's path for one prompt: the token is its only credential (stored hashed). */
export const callbackPath = (token: string) => `/v1/callbacks/mpesa/${token}`;
