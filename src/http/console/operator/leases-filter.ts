import type { LeaseFilter } from '../../../domain/runtime/runtime.repository.js';
import { queryText } from '../form-fields.js';

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

/** The filters of `GET /admin/runtime/leases`, from the console's form fields. */
export function parseLeasesQuery(query: LeasesQuery): ParsedLeasesQuery {
  const form = {
    app: queryText(query.app, 100),
    assetNum: queryText(query.assetNum, 64),
    product: queryText(query.product, 255),
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
