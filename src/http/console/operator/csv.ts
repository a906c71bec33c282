/**
 * What makes a spreadsheet end a cell: a quote or line break, and every separator one may split
 * on: the comma, the semicolon (Excel's list separator where the decimal mark is a comma) and the
 * tab. A cell holding any is quoted, and a quoted cell stays one cell, so no part of it becomes a
 * cell of its own that could start with a formula.
 */
const ENDS_A_CELL = /[",;\t\r\n]/;

/**
 * What a spreadsheet may read as a formula: = + - @ first, also after leading whitespace (some
 * trim it on import), or a tab or carriage return first.
 */
const FORMULA_START = /^(?:[\t\r]|\s*[=+\-@])/;

/**
 * One CSV cell (RFC 4180), quoted when it holds a quote, a line break or a separator, quotes
 * doubled. A cell a spreadsheet would read as a formula is prefixed with ' so that opening the
 * file runs nothing (CSV injection), whatever separator the spreadsheet splits on.
 */
export function csvCell(value: string | number | null | undefined): string {
  let text = value === null || value === undefined ? '' : String(value);
  if (FORMULA_START.test(text)) text = `'${text}`;
  return ENDS_A_CELL.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLine(cells: ReadonlyArray<string | number | null | undefined>): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}
