import type { AssetProductsView, ProductInstanceView } from '../../../domain/member-assets/asset-tree.js';

export interface ProductLine {
  name: string;
  uri: string;
  start: number | null;
  end: number | null;
  concurrent: number | null;
  trial: boolean;
  merchandise: string | null;
}

function line(p: ProductInstanceView, merchandise: string | null): ProductLine {
  return {
    name: p.productName === '' ? p.productUri : p.productName,
    uri: p.productUri,
    start: p.limitStartTime,
    end: p.limitEndTime,
    concurrent: p.limitConcurrent,
    trial: p.trial === 1,
    merchandise,
  };
}

/** Every product of member op 7's answer, those inside merchandise (at any depth) included. */
export function productsOf(view: AssetProductsView): ProductLine[] {
  const lines = view.productInstanceList.map((p) => line(p, null));
  const stack = [...view.children];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    const name = node.merchandiseName === '' ? node.merchandiseNum : node.merchandiseName;
    lines.push(...(node.productInstanceList ?? []).map((p) => line(p, name)));
    stack.push(...(node.children ?? []));
  }
  return lines;
}
