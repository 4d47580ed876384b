/**
 * The closed error catalog. Every error the API answers with is an `AppError` whose code
 * decides the HTTP status and the `type` of the error body (DESIGN.md, "Errors").
 */
export const errorCodes = {
  invalid_field: 400,
  unknown_field: 400,
  missing_field: 400,
  invalid_json: 400,
  confirmation_required: 400,
  rail_not_available: 400,
  wallet_not_connected: 400,
  credentials_rejected: 422,
  missing_api_key: 401,
  invalid_api_key: 401,
  api_key_revoked: 401,
  api_key_expired: 401,
  wrong_key_kind: 403,
  wrong_environment: 403,
  live_mode_forbidden: 403,
  not_found: 404,
  invalid_state: 409,
  wallet_key_in_use: 409,
  prompt_in_progress: 409,
  prompt_limit_reached: 409,
  idempotency_key_reused: 409,
  idempotency_request_in_progress: 409,
  rate_limited: 429,
  phone_prompt_limit: 429,
  upstream_failed: 502,
  upstream_unavailable: 503,
  rate_unavailable: 503,
  internal: 500,
} as const;

export type ErrorCode = keyof typeof errorCodes;

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'conflict_error'
  | 'rate_limit_error'
  | 'upstream_error'
  | 'api_error';

export function errorTypeForStatus(status: number): ErrorType {
  if (status === 400 || status === 422) return 'invalid_request_error';
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 409) return 'conflict_error';
  if (status === 429) return 'rate_limit_error';
  if (status === 502 || status === 503) return 'upstream_error';
  return 'api_error';
}

export class AppError extends Error {
  readonly status: number;
  readonly type: ErrorType;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly param?: string,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
    this.status = errorCodes[code];
    this.type = errorTypeForStatus(this.status);
  }
}

export const notFound = (what: string): AppError => new AppError('not_found', `No such ${what}.`);
