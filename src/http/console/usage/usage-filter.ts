import type { UsageQuery } from '../../../domain/usage/usage.service.js';

/** The usage pages' query string, as typed: blank fields mean "any". */
export interface UsagePageQuery {
  product?: string;
  enterprise?: string;
  bucket?: string;
}

export interface UsageForm {
  product: string;
  enterprise: string;
  bucket: 'hour' | 'day';
}

export function parseUsageQuery(query: UsagePageQuery): { filter: UsageQuery; form: UsageForm } {
  const form: UsageForm = {
    product: (query.product ?? '').trim().slice(0, 255),
    enterprise: (query.enterprise ?? '').trim().slice(0, 255),
    bucket: query.bucket === 'hour' ? 'hour' : 'day',
  };
  return {
    form,
    filter: {
      bucket: form.bucket,
      ...(form.product === '' ? {} : { product: form.product }),
      ...(form.enterprise === '' ? {} : { enterprise: form.enterprise }),
    },
  };
}

export function usageQueryString(form: UsageForm): string {
  return new URLSearchParams({
    product: form.product,
    enterprise: form.enterprise,
    bucket: form.bucket,
  }).toString();
}
