import { describe, expect, it } from 'vitest';
import { pageInfo } from '../../src/domain/members/page-info.js';

const items = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

describe('PageHelper PageInfo', () => {
  it('describes an empty result', () => {
    expect(pageInfo(1, 10, 0, [])).toEqual({
      pageNum: 1,
      pageSize: 10,
      size: 0,
      orderBy: null,
      startRow: 0,
      endRow: 0,
      total: 0,
      pages: 0,
      list: [],
      firstPage: 0,
      prePage: 0,
      nextPage: 0,
      lastPage: 0,
      isFirstPage: true,
      isLastPage: true,
      hasPreviousPage: false,
      hasNextPage: false,
      navigatePages: 8,
      navigatepageNums: [],
    });
  });

  it('describes a single partial page', () => {
    expect(pageInfo(1, 10, 3, items(3))).toMatchObject({
      size: 3,
      startRow: 1,
      endRow: 3,
      pages: 1,
      firstPage: 1,
      lastPage: 1,
      prePage: 0,
      nextPage: 0,
      isFirstPage: true,
      isLastPage: true,
      hasPreviousPage: false,
      hasNextPage: false,
      navigatepageNums: [1],
    });
  });

  it('counts exactly full pages without an empty extra page', () => {
    const last = pageInfo(3, 10, 30, items(10));
    expect(last).toMatchObject({
      pages: 3,
      startRow: 21,
      endRow: 30,
      prePage: 2,
      nextPage: 0,
      isFirstPage: false,
      isLastPage: true,
      hasPreviousPage: true,
      hasNextPage: false,
      navigatepageNums: [1, 2, 3],
    });
    expect(pageInfo(2, 10, 30, items(10))).toMatchObject({ prePage: 1, nextPage: 3, isLastPage: false });
  });

  it('keeps the requested page past the end, empty', () => {
    expect(pageInfo(5, 10, 25, [])).toMatchObject({
      pageNum: 5,
      size: 0,
      startRow: 0,
      endRow: 0,
      total: 25,
      pages: 3,
      prePage: 4,
      nextPage: 0,
      isFirstPage: false,
      isLastPage: false,
      hasPreviousPage: true,
      hasNextPage: false,
      navigatepageNums: [1, 2, 3],
      firstPage: 1,
      lastPage: 3,
    });
  });

  it('shows every page when there are exactly 8', () => {
    expect(pageInfo(8, 1, 8, items(1)).navigatepageNums).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  describe('with more than 8 pages (20 pages of 5)', () => {
    const at = (pageNum: number) => pageInfo(pageNum, 5, 100, pageNum <= 20 ? items(5) : []);

    it('anchors the window at the start', () => {
      for (const pageNum of [1, 2, 3, 4, 5]) {
        expect(at(pageNum).navigatepageNums).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      }
      expect(at(1)).toMatchObject({ firstPage: 1, lastPage: 8, prePage: 0, nextPage: 2 });
    });

    it('starts the window 4 before the page in the middle', () => {
      expect(at(6).navigatepageNums).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
      expect(at(10)).toMatchObject({
        navigatepageNums: [6, 7, 8, 9, 10, 11, 12, 13],
        firstPage: 6,
        lastPage: 13,
        startRow: 46,
        endRow: 50,
        prePage: 9,
        nextPage: 11,
      });
      expect(at(16).navigatepageNums).toEqual([12, 13, 14, 15, 16, 17, 18, 19]);
    });

    it('anchors the window at the end', () => {
      for (const pageNum of [17, 18, 20]) {
        expect(at(pageNum).navigatepageNums).toEqual([13, 14, 15, 16, 17, 18, 19, 20]);
      }
      expect(at(20)).toMatchObject({
        firstPage: 13,
        lastPage: 20,
        nextPage: 0,
        isLastPage: true,
        hasNextPage: false,
        startRow: 96,
        endRow: 100,
      });
    });

    it('keeps the end window past the end', () => {
      expect(at(25)).toMatchObject({
        navigatepageNums: [13, 14, 15, 16, 17, 18, 19, 20],
        pageNum: 25,
        size: 0,
        prePage: 24,
        nextPage: 0,
        isLastPage: false,
      });
    });
  });

  it('lets the last page be partial', () => {
    expect(pageInfo(3, 10, 23, items(3))).toMatchObject({ startRow: 21, endRow: 23, pages: 3 });
  });
});
