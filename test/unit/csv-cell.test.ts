import { describe, expect, it } from 'vitest';
import { csvCell, csvLine } from '../../src/http/console/operator/csv.js';

/**
 * A line as a spreadsheet reads it with `separator` (RFC 4180 quoting, as Excel and LibreOffice
 * honour it): the cells' texts, quotes removed.
 */
function readLine(line: string, separator: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i] as string;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        cell += '"';
        i += 1;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === separator) {
      cells.push(cell);
      cell = '';
    } else cell += c;
  }
  cells.push(cell);
  return cells;
}

/** How a spreadsheet tells a formula: = + - @ first (leading whitespace trimmed), or a tab or CR. */
const FORMULA = /^(?:[\t\r]|\s*[=+\-@])/;

/** Values someone could put into a name, a subject or an audit detail. */
const HOSTILE = [
  '=1+1',
  '+1',
  '-1',
  '@SUM(A1)',
  '\t=1',
  '\r=1',
  ' =HYPERLINK("http://x")',
  '\n=1',
  'name;=HYPERLINK("http://x")',
  'name;+1;@SUM(A1)',
  'name\t=1\t-2',
  'name,=1',
  'a;"b";=c',
  '{"name":"x;=1+1"}',
];

describe('csvCell', () => {
  it('quotes cells holding a quote, a line break or any separator a spreadsheet splits on', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('two words')).toBe('two words');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('a;b')).toBe('"a;b"');
    expect(csvCell('a\tb')).toBe('"a\tb"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell('two\rlines')).toBe('"two\rlines"');
    expect(csvCell(null)).toBe('');
    expect(csvCell(undefined)).toBe('');
    expect(csvCell(42)).toBe('42');
  });

  it('defuses a formula at the start, after leading whitespace, or behind a tab or CR', () => {
    expect(csvCell('=1+1')).toBe("'=1+1");
    expect(csvCell('+1')).toBe("'+1");
    expect(csvCell('-1')).toBe("'-1");
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvCell(' =1+1')).toBe("' =1+1");
    expect(csvCell('\t=1')).toBe(`"'\t=1"`);
    expect(csvCell('\rx')).toBe(`"'\rx"`);
    expect(csvCell('=A1,"x"')).toBe(`"'=A1,""x"""`);
    expect(csvCell('x;=1+1')).toBe('"x;=1+1"');
    expect(csvCell('a-b')).toBe('a-b');
  });

  it('reads back as the same cells when split on commas, none of them a formula', () => {
    const cells = readLine(csvLine(['id', ...HOSTILE]).slice(0, -2), ',');
    expect(cells.map((cell) => cell.replace(/^'/, ''))).toEqual(['id', ...HOSTILE]);
    for (const cell of cells) expect(cell).not.toMatch(FORMULA);
  });

  it('gives no cell a formula when a spreadsheet splits the file on semicolons or tabs', () => {
    // Excel where the list separator is `;` opens our comma-separated file splitting on `;`: every
    // `;` and tab is inside quotes, so nothing after one starts a cell of its own.
    for (const separator of [';', '\t']) {
      for (const first of ['id', ...HOSTILE]) {
        for (const cell of readLine(csvLine([first, ...HOSTILE]).slice(0, -2), separator)) {
          expect(cell, `split on ${JSON.stringify(separator)}`).not.toMatch(FORMULA);
        }
      }
    }
  });
});
