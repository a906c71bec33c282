/**
 * RFC 4180 text as rows of fields: quoted fields may hold commas, quotes ("") and line breaks;
 * a leading byte-order mark and CRLF line ends are accepted. Each row keeps the line it began on.
 */
export function parseCsv(text: string): Array<{ line: number; fields: string[] }> {
  const rows: Array<{ line: number; fields: string[] }> = [];
  const input = text.startsWith('\uFEFF') ? text.slice(1) : text;
  let fields: string[] = [];
  let current = '';
  let quoted = false;
  let line = 1;
  let rowLine = 1;
  const endRow = () => {
    fields.push(current);
    if (fields.some((f) => f.trim() !== '')) rows.push({ line: rowLine, fields });
    fields = [];
    current = '';
  };
  for (let i = 0; i < input.length; i++) {
    const c = input[i] as string;
    if (quoted) {
      if (c === '"' && input[i + 1] === '"') {
        current += '"';
        i++;
      } else if (c === '"') quoted = false;
      else {
        if (c === '\n') line++;
        current += c;
      }
    } else if (c === '"' && current === '') quoted = true;
    else if (c === ',') {
      fields.push(current);
      current = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && input[i + 1] === '\n') i++;
      endRow();
      line++;
      rowLine = line;
    } else current += c;
  }
  if (current !== '' || fields.length > 0) endRow();
  return rows;
}
