import { runtimeMessages, type RuntimeCodeValue } from '../../../errors/runtime-codes.js';
import type { ConsoleContext } from '../context.js';
import type { Translate } from '../i18n/index.js';

/**
 * The runtime's message templates as patterns: each `{n}` captures the value the message carried,
 * so the sentence can be said again in the page's language with the same numbers and times.
 */
const PATTERNS = new Map(
  (Object.entries(runtimeMessages) as Array<[RuntimeCodeValue, string]>).map(([code, template]) => {
    const escaped = template.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\\\{(\d+)\\\}/g, '(?<v$1>.*?)');
    return [code, new RegExp(`^${escaped}$`, 's')] as const;
  }),
);

const isRuntimeCode = (code: string): code is RuntimeCodeValue => PATTERNS.has(code as RuntimeCodeValue);

/**
 * A refused check-out's reason in the page's language: the code's sentence, filled with the
 * values of the message the audit row kept (written in English by the runtime). A code or a
 * message the runtime's table does not know (an older wording) is said as "refused" with its code.
 */
export function refusalSentence(t: Translate, code: string, message: string): string {
  if (!isRuntimeCode(code)) return t('usage.ent.refusedCode', { code });
  const found = PATTERNS.get(code)?.exec(message);
  if (found === null || found === undefined) return t('usage.ent.refusedCode', { code });
  const values = Object.fromEntries(
    Object.entries(found.groups ?? {}).map(([name, value]) => [name.slice(1), value ?? '']),
  );
  return t(`code.${code}`, values);
}

/** The sentence, and under Details the runtime's code and its own words, for support. */
export function RefusalReason(props: { context: ConsoleContext; code: string; message: string }) {
  const { t } = props.context;
  return (
    <>
      {refusalSentence(t, props.code, props.message)}
      <details class="error-code" data-code={props.code}>
        <summary>{t('error.details')}</summary>
        <span class="code">{t('error.code', { code: props.code })}</span>
        {props.message !== '' && <code class="detail">{props.message}</code>}
      </details>
    </>
  );
}
