import type { LeaseFilter } from '../../../domain/runtime/runtime.repository.js';

/** The leases page's query, as its form sends it: every field optional. */
export interface LeasesQuery {
  app?: string;
  assetNum?: string;
  product?: string;
  all?: string;
}

export interface ParsedLeasesQuery {
  filter: Omit<LeaseFilter, 'now' | 'limit'>;
  /** The form's values, to show again. */
  form: { app: string; assetNum: string; product: string; all: boolean };
}

// The bounds of `GET /admin/runtime/leases`: a longer value matches no lease anyway.
const text = (value: unknown, max: number) => (typeof value === 'string' ? value.trim().slice(0, max) : '');

/** The filters of `GET /admin/runtime/leases`, from the console's form fields. */
export function parseLeasesQuery(query: LeasesQuery): ParsedLeasesQuery {
  const form = {
    app: text(query.app, 100),
    assetNum: text(query.assetNum, 64),
    product: text(query.product, 255),
    all: query.all === '1',
  };
  return {
    form,
    filter: {
      ...(form.app === '' ? {} : { appKey: form.app }),
      ...(form.assetNum === '' ? {} : { assetNum: form.assetNum }),
      ...(form.product === '' ? {} : { product: form.product }),
      live: !form.all,
    },
  };
}
