/** Short text helpers shared by the preview's table and status line. */

const COUNT = new Intl.NumberFormat('en');

/** A count with thousands separators: `135,233`. */
export function formatCount(value: number): string {
  return COUNT.format(value);
}

/** A byte size a person reads at a glance: `812 B`, `684 KB`, `5.6 MB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const [value, unit] = bytes < 1e6 ? [bytes / 1e3, 'KB'] : bytes < 1e9 ? [bytes / 1e6, 'MB'] : [bytes / 1e9, 'GB'];
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${unit}`;
}

/** A coordinate or measure with at most `digits` decimals and no trailing zeros: `42.5795`, `-180`. */
export function formatDecimal(value: number, digits: number): string {
  return Number.isInteger(value) ? String(value) : String(Number(value.toFixed(digits)));
}

/** `text` cut to `max` characters with an ellipsis, or unchanged when it fits. */
export function truncateText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
