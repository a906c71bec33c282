/** `y-m-d`: whole years, months and days, e.g. `1-0-0` for a year, `0-6-15` for six and a half months. */
export const TIME_EXPRESSION = /^([0-9]{1,3})-([0-9]{1,4})-([0-9]{1,5})$/;

export function isTimeExpression(value: string): boolean {
  return TIME_EXPRESSION.test(value);
}

/**
 * Calendar arithmetic in UTC, as java.time's plusYears/plusMonths/plusDays: years and months move
 * the month and clamp the day to the month's last (Jan 31 + 0-1-0 = Feb 28 or 29), then days are
 * added. The time of day is kept.
 */
export function addTimeExpression(startMs: number, expression: string): number {
  const match = TIME_EXPRESSION.exec(expression);
  if (!match) throw new Error(`not a y-m-d expression: ${expression}`);
  const [years, months, days] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const start = new Date(startMs);
  const monthIndex = start.getUTCFullYear() * 12 + start.getUTCMonth() + years * 12 + months;
  const year = Math.floor(monthIndex / 12);
  const month = monthIndex % 12;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const moved = Date.UTC(
    year,
    month,
    Math.min(start.getUTCDate(), lastDay),
    start.getUTCHours(),
    start.getUTCMinutes(),
    start.getUTCSeconds(),
    start.getUTCMilliseconds(),
  );
  return moved + days * 86_400_000;
}
