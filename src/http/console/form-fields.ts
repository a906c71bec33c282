import type { FastifyRequest } from 'fastify';

/** A posted form's fields: urlencoded, or multipart with its fields attached to the body. */
type FormBody = Record<string, unknown> | null | undefined;

/** A form field as text: absent, a file or anything else is ''. */
export function formText(request: FastifyRequest, name: string): string {
  const value = (request.body as FormBody)?.[name];
  return typeof value === 'string' ? value : '';
}

/** Every value of a repeated field (checkboxes), as text. */
export function formValues(request: FastifyRequest, name: string): string[] {
  const value = (request.body as FormBody)?.[name];
  const all = Array.isArray(value) ? value : [value];
  return all.filter((v): v is string => typeof v === 'string' && v !== '');
}

/** A checkbox: checked when posted with any value. */
export function formChecked(request: FastifyRequest, name: string): boolean {
  return formText(request, name) !== '';
}

/** A query parameter as text, trimmed and cut to `max` characters: absent or repeated is ''. */
export function queryText(value: unknown, max: number): string {
  return typeof value === 'string' ? value.trim().slice(0, max) : '';
}

/** `?page=` as a page number: 1 when absent or nonsense, never beyond a sane bound. */
export function pageOf(value: string | undefined): number {
  return Math.max(1, Math.min(100_000, Number.parseInt(value ?? '1', 10) || 1));
}
