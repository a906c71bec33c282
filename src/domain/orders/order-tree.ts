import type { Asset, Merchandise, Product } from './order-model.js';

export interface MerchandiseVisit {
  node: Merchandise;
  path: string;
  /** Index of the parent in the visit order, or null at the top. */
  parent: number | null;
}

/**
 * The asset's merchandise trees in breadth-first order, so every parent comes before its
 * children. Iterative: a deep tree must not exhaust the stack.
 */
export function merchandiseVisits(asset: Asset, assetPath: string): MerchandiseVisit[] {
  const visits: MerchandiseVisit[] = asset.merchandises.map((node, i) => ({
    node,
    path: `${assetPath}.merchandises[${i}]`,
    parent: null,
  }));
  for (let at = 0; at < visits.length; at++) {
    const visit = visits[at] as MerchandiseVisit;
    visit.node.children.forEach((child, i) =>
      visits.push({ node: child, path: `${visit.path}.children[${i}]`, parent: at }),
    );
  }
  return visits;
}

export interface ProductVisit {
  product: Product;
  path: string;
  /** Index into merchandiseVisits, or null for a product directly on the asset. */
  merchandise: number | null;
}

/** Every product of an asset: its own, then those inside its merchandise. */
export function productVisits(
  asset: Asset,
  assetPath: string,
  merchandise: MerchandiseVisit[],
): ProductVisit[] {
  const visits: ProductVisit[] = asset.products.map((product, i) => ({
    product,
    path: `${assetPath}.products[${i}]`,
    merchandise: null,
  }));
  merchandise.forEach((m, index) =>
    m.node.products.forEach((product, i) =>
      visits.push({ product, path: `${m.path}.licenseOrderProductList[${i}]`, merchandise: index }),
    ),
  );
  return visits;
}

/** The time expression that applies to a product: its own, else its nearest merchandise's. */
export function effectiveExpression(visit: ProductVisit, merchandise: MerchandiseVisit[]): string | null {
  if (visit.product.timeDurationExpression !== null) return visit.product.timeDurationExpression;
  let at = visit.merchandise;
  while (at !== null) {
    const m = merchandise[at] as MerchandiseVisit;
    if (m.node.timeDurationExpression !== null) return m.node.timeDurationExpression;
    at = m.parent;
  }
  return null;
}
