import { termsSummaryOf } from '../../../domain/relay/grant-terms.js';
import type { RelayGrantAnswer, RelayGrantView } from '../../../domain/relay/relay-grant.service.js';
import { Can } from '../can.js';
import type { ConsoleContext } from '../context.js';
import type { MessageKey } from '../i18n/index.js';
import { Layout } from '../layout.js';
import { Csrf, Notice, type ConsoleError } from '../ui.js';
import { RELAY_FILE_LIMITS, type Area, type RelayFile } from './relay-forms.js';
import { heldLine, RelayGrantsTable, termsLine } from './relay-grants-table.js';

/** What the page shows besides the list: a grant just made, an import done, or what was refused. */
export interface RelaysOutcome {
  answer?: RelayGrantAnswer;
  error?: ConsoleError;
  done?: string;
  /** The refused text, shown again in the box of the form it was posted to. */
  posted?: { field: RelayFile; text: string };
  /** The grant form's terms as posted, shown again when it was refused. */
  terms?: { machines: string; overage: string };
}

export const relaysBase = (area: Area) => `/console/${area}/relays`;

/** A time as every time in the console is said: UTC, to the minute. */
export function utcMinute(at: number): string {
  return `${new Date(at).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * The grant just made: its text to carry to the relay, in a box to copy from and as the file
 * `keyward relay grant` would write (`<relay>-grant.jwt`), as the offline page gives its answer.
 */
function GrantAnswer(props: { context: ConsoleContext; answer: RelayGrantAnswer }) {
  const { context, answer } = props;
  const { t } = context;
  const file = `data:application/jwt;base64,${Buffer.from(`${answer.token}\n`).toString('base64')}`;
  const licenses = answer.licenses
    .map((l) => {
      const held = heldLine(context, l);
      return `${l.assetNum}/${l.crmProductId ?? '*'} × ${l.seats}${held === '' ? '' : ` (${held})`}`;
    })
    .join(', ');
  return (
    <section class="activation-answer relay-answer" aria-labelledby="grant-title" data-grant={answer.grantId}>
      <h2 id="grant-title">{t('relays.answer', { relayId: answer.relayId })}</h2>
      <p>{t('relays.granted', { grantId: answer.grantId, licenses, until: utcMinute(answer.endsAt) })}</p>
      <p class="relay-terms">{termsLine(context, termsSummaryOf(answer))}</p>
      {!answer.made && <p class="note">{t('relays.answeredBefore')}</p>}
      <p>{t('relays.answerHint')}</p>
      <label for="grant-text">{t('relays.grantText')}</label>
      <textarea id="grant-text" class="typed-code" readonly rows={6}>
        {answer.token}
      </textarea>
      {answer.code === null ? (
        <p class="note">{t('relays.noCode')}</p>
      ) : (
        <>
          <label for="grant-code">{t('relays.grantCode')}</label>
          <textarea id="grant-code" class="typed-code" readonly rows={4}>
            {answer.code}
          </textarea>
        </>
      )}
      <p>
        <a href={file} download={`${answer.relayId}-grant.jwt`}>
          {t('relays.download')}
        </a>
      </p>
    </section>
  );
}

const FORMS: Record<
  RelayFile,
  {
    path: string;
    title: MessageKey;
    text: MessageKey;
    file: MessageKey;
    submit: MessageKey;
    hint?: MessageKey;
  }
> = {
  request: {
    path: 'grant',
    title: 'relays.grantTitle',
    text: 'relays.request',
    file: 'relays.requestFile',
    submit: 'relays.grantSubmit',
  },
  report: {
    path: 'report',
    title: 'relays.reportTitle',
    text: 'relays.report',
    file: 'relays.reportFile',
    submit: 'relays.reportSubmit',
    hint: 'relays.reportHint',
  },
  return: {
    path: 'return',
    title: 'relays.returnTitle',
    text: 'relays.return',
    file: 'relays.returnFile',
    submit: 'relays.returnSubmit',
    hint: 'relays.returnHint',
  },
};

/** The grant form's terms: the machines that may check out, and the overage allowed. */
function TermFields(props: { context: ConsoleContext; outcome: RelaysOutcome }) {
  const { context, outcome } = props;
  const { t } = context;
  const errorOf = (field: 'machines' | 'overage') =>
    outcome.error?.field === field ? outcome.error.message : undefined;
  const machinesError = errorOf('machines');
  const overageError = errorOf('overage');
  return (
    <>
      <label for="field-machines">{t('relays.machines')}</label>
      <textarea
        id="field-machines"
        name="machines"
        class="typed-code"
        rows={3}
        aria-invalid={machinesError === undefined ? undefined : 'true'}
        aria-describedby={machinesError === undefined ? 'machines-hint' : 'machines-error'}
      >
        {outcome.terms?.machines ?? ''}
      </textarea>
      <small id="machines-hint" class="note">
        {t('relays.machinesHint')}
      </small>
      {machinesError !== undefined && (
        <small id="machines-error" class="field-error">
          {machinesError}
        </small>
      )}
      <label for="field-overage">{t('relays.overage')}</label>
      <input
        id="field-overage"
        name="overage"
        type="number"
        min="0"
        step="1"
        inputmode="numeric"
        value={outcome.terms?.overage ?? ''}
        aria-invalid={overageError === undefined ? undefined : 'true'}
        aria-describedby={overageError === undefined ? 'overage-hint' : 'overage-error'}
      />
      <small id="overage-hint" class="note">
        {t('relays.overageHint')}
      </small>
      {overageError !== undefined && (
        <small id="overage-error" class="field-error">
          {overageError}
        </small>
      )}
    </>
  );
}

/** One of the page's three forms: a file's text pasted, or the file uploaded. */
function FileForm(props: { context: ConsoleContext; area: Area; name: RelayFile; outcome: RelaysOutcome }) {
  const { context, area, name, outcome } = props;
  const { t } = context;
  const form = FORMS[name];
  const invalid = outcome.error?.field === name;
  const id = `field-${name}`;
  return (
    <form
      method="post"
      action={`${relaysBase(area)}/${form.path}`}
      enctype="multipart/form-data"
      class="card"
      data-form={name}
    >
      <h2>{t(form.title)}</h2>
      <Csrf context={context} />
      {form.hint !== undefined && (
        <p class="note">{t(form.hint, { kib: Math.floor(RELAY_FILE_LIMITS.report / 1024) })}</p>
      )}
      <label for={id}>{t(form.text)}</label>
      <textarea
        id={id}
        name={name}
        class="typed-code"
        rows={4}
        aria-invalid={invalid ? 'true' : undefined}
        aria-describedby={invalid ? `${id}-error` : undefined}
      >
        {outcome.posted?.field === name ? outcome.posted.text : ''}
      </textarea>
      <label for={`${id}-file`}>{t(form.file)}</label>
      <input id={`${id}-file`} name={`${name}File`} type="file" accept=".jwt,.txt,text/plain" />
      {invalid && (
        <small id={`${id}-error`} class="field-error">
          {outcome.error?.message}
        </small>
      )}
      {name === 'request' && <TermFields context={context} outcome={outcome} />}
      <button type="submit" class={name === 'request' ? undefined : 'secondary'}>
        {t(form.submit)}
      </button>
    </form>
  );
}

/**
 * The Relays page of either area: a grant just made, the three forms for those who may act, and
 * the grants with each relay's last report.
 */
export function RelaysPage(props: {
  context: ConsoleContext;
  area: Area;
  grants: RelayGrantView[];
  outcome: RelaysOutcome;
}) {
  const { context, area, grants, outcome } = props;
  const { t } = context;
  return (
    <Layout context={context} title={t('nav.relays')}>
      <Notice context={context} error={outcome.error} done={outcome.done} />
      <p>{t('relays.hint')}</p>
      {area === 'enterprise' && <p>{t('relays.hintOwn')}</p>}
      {outcome.answer !== undefined && <GrantAnswer context={context} answer={outcome.answer} />}
      <Can context={context} permission="write">
        <div class="cards forms relay-forms">
          {(['request', 'report', 'return'] as const).map((name) => (
            <FileForm context={context} area={area} name={name} outcome={outcome} />
          ))}
        </div>
      </Can>
      <h2>{t('relays.listTitle')}</h2>
      <RelayGrantsTable context={context} area={area} grants={grants} />
    </Layout>
  );
}
