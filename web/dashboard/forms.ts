import type { FastifyRequest } from 'fastify';
import type { z } from 'zod/v4';
import { parseInput } from '../../api/route.js';
import { AppError } from '../../domain/errors.js';

/**
 * Dashboard forms arrive as application/x-www-form-urlencoded. They are turned into the same
 * JSON-shaped body the API takes and checked with the API's own zod schema (`parseInput`), so a
 * bad value gets exactly the API's message and `param`.
 */
export type Form = URLSearchParams;

/** The parsed form; any other body (JSON, nothing) reads as an empty form and fails the CSRF check. */
export function formOf(request: FastifyRequest): Form {
  return request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
}

/** An empty input means "not given", as an omitted JSON field does. */
export function optionalText(form: Form, name: string): string | undefined {
  const value = form.get(name);
  return value === null || value.trim() === '' ? undefined : value;
}

/**
 * A number input: a plain decimal becomes a number, as JSON would carry it; anything else stays
 * text so the API schema names the problem ("expected number, received string").
 */
export function optionalNumber(form: Form, name: string): number | string | undefined {
  const value = optionalText(form, name)?.trim();
  if (value === undefined) return undefined;
  return /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
}

export function parseApiBody<T extends z.ZodType>(schema: T, value: Record<string, unknown>): z.infer<T> {
  const defined = Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
  return parseInput(schema, defined, 'body');
}

export interface FormErrors {
  /** A message about the whole form (no field, or a field this form does not show). */
  form?: string;
  fields: Record<string, string>;
}

export const noErrors: FormErrors = { fields: {} };

/** Places an API error next to the field its `param` names (`enabledRails.1` → `enabledRails`). */
export function formErrorsOf(err: AppError, fieldNames: readonly string[]): FormErrors {
  const field = err.param?.split('.')[0];
  if (field && fieldNames.includes(field)) return { fields: { [field]: err.message } };
  return { form: err.message, fields: {} };
}

/** Runs a form action; an `AppError` becomes form errors (with its status), anything else propagates. */
export async function attempt<T>(
  work: () => Promise<T>,
  fieldNames: readonly string[],
): Promise<{ ok: true; value: T } | { ok: false; status: number; errors: FormErrors; headers?: Record<string, string> }> {
  try {
    return { ok: true, value: await work() };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { ok: false, status: err.status, errors: formErrorsOf(err, fieldNames), headers: err.headers };
  }
}
