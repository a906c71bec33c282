import { MAX_BUCKETS, UsageInputError } from '../../../domain/usage/usage-range.js';
import type { ConsoleContext } from '../context.js';
import type { Translate } from '../i18n/index.js';
import { Field, type ConsoleError } from '../ui.js';
import type { DateField, UsageForm } from './usage-filter.js';

/**
 * A filter the page cannot show, as a sentence in the page's language next to the field it names:
 * a date field that is not a day, or what the service refused (a reversed or too long range, an
 * unknown enterprise).
 */
export function usageErrorOf(t: Translate, problem: DateField | UsageInputError): ConsoleError {
  if (!(problem instanceof UsageInputError)) return { field: problem, message: t('usage.badDate') };
  switch (problem.problem) {
    case 'reversed':
      return { field: problem.field, message: t('usage.reversed') };
    case 'too-long':
      return { field: problem.field, message: t('usage.tooLong', { max: MAX_BUCKETS }) };
    case 'out-of-range':
      return { field: problem.field, message: t('usage.outOfRange') };
    case 'unknown':
    case 'invalid':
      return { field: problem.field, message: t('usage.badFilter', { message: problem.message }) };
  }
}

/** The range's two days, UTC; blank is the default range. */
export function DateRangeFields(props: {
  context: ConsoleContext;
  form: UsageForm;
  error: ConsoleError | undefined;
}) {
  const { t } = props.context;
  return (
    <>
      <Field name="from" type="date" label={t('usage.from')} value={props.form.from} error={props.error} />
      <Field name="to" type="date" label={t('usage.to')} value={props.form.to} error={props.error} />
    </>
  );
}
