import { printable } from '../cli/printable.js';

const LEVELS: Record<number, { label: string; color: string }> = {
  10: { label: 'TRACE', color: '90' },
  20: { label: 'DEBUG', color: '90' },
  30: { label: 'INFO ', color: '32' },
  40: { label: 'WARN ', color: '33' },
  50: { label: 'ERROR', color: '31' },
  60: { label: 'FATAL', color: '31' },
};

/** Fields every line has, or that the line's head already shows. */
const HEAD_FIELDS = new Set(['level', 'time', 'msg', 'pid', 'hostname']);

/** A value as `key=value` shows it: bare when it reads as one word, else as a JSON string. */
function shown(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? printable(value) : JSON.stringify(value);
  // JSON escapes C0 only; printable escapes the rest (DEL, C1, bidirectional overrides).
  return printable(JSON.stringify(value) ?? String(value));
}

/**
 * Fields a request's line (http/request-log.ts) carries for machines and already says in its
 * message: `GET /docs 200 3.2 ms`.
 */
const REQUEST_FIELDS = new Set(['req', 'res', 'responseTime']);

/** `req.method=GET req.url=/docs`: objects one level deep flattened into dotted keys. */
function fields(entry: Record<string, unknown>): string[] {
  const out: string[] = [];
  const requestLine = typeof entry.responseTime === 'number';
  for (const [key, value] of Object.entries(entry)) {
    if (HEAD_FIELDS.has(key) || (requestLine && REQUEST_FIELDS.has(key))) continue;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [inner, v] of Object.entries(value)) {
        if (v !== undefined) out.push(`${printable(key)}.${printable(inner)}=${shown(v)}`);
      }
    } else if (value !== undefined) {
      out.push(`${printable(key)}=${shown(value)}`);
    }
  }
  return out;
}

/** One pino JSON line as a person reads it: `12:00:01.234 INFO  message key=value …`. */
export function prettyLine(json: string, color: boolean): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return printable(json.trimEnd());
  }
  const time = new Date(typeof entry.time === 'number' ? entry.time : Date.now()).toTimeString().slice(0, 8);
  const level = LEVELS[Number(entry.level)] ?? { label: String(entry.level).padEnd(5), color: '0' };
  const paint = (code: string, s: string) => (color ? `\x1b[${code}m${s}\x1b[0m` : s);
  const message = typeof entry.msg === 'string' ? printable(entry.msg) : '';
  return [paint('2', time), paint(level.color, level.label), message, ...fields(entry)]
    .filter((part) => part !== '')
    .join(' ');
}

/**
 * A pino destination that writes each line pretty, on the process's own thread: in order with the
 * start banner, and nothing lost at exit. What a line shows went through the logger's redaction and
 * serializers first, and every value is escaped, so a logged name cannot move the cursor.
 */
export function prettyDestination(out: NodeJS.WritableStream, color: boolean): { write(line: string): void } {
  return {
    write(line: string) {
      out.write(`${prettyLine(line, color)}\n`);
    },
  };
}
