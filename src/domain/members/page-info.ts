/** How many page numbers the navigation window shows (PageHelper's `navigatePages`). */
export const NAVIGATE_PAGES = 8;

/** MyBatis PageHelper's `PageInfo` around a page of items, as member op 5 answers it. */
export interface PageInfo<T> {
  pageNum: number;
  pageSize: number;
  size: number;
  orderBy: null;
  startRow: number;
  endRow: number;
  total: number;
  pages: number;
  list: T[];
  firstPage: number;
  prePage: number;
  nextPage: number;
  lastPage: number;
  isFirstPage: boolean;
  isLastPage: boolean;
  hasPreviousPage: boolean;
  hasNextPage: boolean;
  navigatePages: number;
  navigatepageNums: number[];
}

/** All pages when they fit, else a window of 8 starting 4 before the page, kept inside 1..pages. */
function navigationWindow(pageNum: number, pages: number): number[] {
  if (pages <= NAVIGATE_PAGES) return Array.from({ length: pages }, (_, i) => i + 1);
  const start = Math.min(Math.max(pageNum - NAVIGATE_PAGES / 2, 1), pages - NAVIGATE_PAGES + 1);
  return Array.from({ length: NAVIGATE_PAGES }, (_, i) => start + i);
}

/**
 * The wrapper for one page, by the formulas of DOMAIN.md §7. A page past the end keeps the
 * requested `pageNum` and is simply empty.
 */
export function pageInfo<T>(pageNum: number, pageSize: number, total: number, list: T[]): PageInfo<T> {
  const size = list.length;
  const pages = Math.ceil(total / pageSize);
  const startRow = size > 0 ? (pageNum - 1) * pageSize + 1 : 0;
  const navigatepageNums = navigationWindow(pageNum, pages);
  return {
    pageNum,
    pageSize,
    size,
    orderBy: null,
    startRow,
    endRow: size > 0 ? startRow + size - 1 : 0,
    total,
    pages,
    list,
    firstPage: navigatepageNums[0] ?? 0,
    prePage: pageNum > 1 ? pageNum - 1 : 0,
    nextPage: pageNum < pages ? pageNum + 1 : 0,
    lastPage: navigatepageNums.at(-1) ?? 0,
    isFirstPage: pageNum === 1,
    isLastPage: pageNum === pages || pages === 0,
    hasPreviousPage: pageNum > 1,
    hasNextPage: pageNum < pages,
    navigatePages: NAVIGATE_PAGES,
    navigatepageNums,
  };
}
