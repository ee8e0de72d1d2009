const money = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** Cents as dollars: 1234 -> $12.34. */
export const cents = (value: number | null | undefined) => (value == null ? '—' : money.format(value / 100));

export const when = (value: string | null | undefined) => (value ? dateTime.format(new Date(value)) : '—');

export const percent = (value: number) => `${(value * 100).toFixed(1)} %`;

/** An enum value as words: no_answer -> no answer. */
export const words = (value: string) => value.replace(/_/g, ' ');
