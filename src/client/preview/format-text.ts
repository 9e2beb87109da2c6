/** Short text helpers shared by the preview's table and status line. */

/** A coordinate or measure with at most `digits` decimals and no trailing zeros: `42.5795`, `-180`. */
export function formatDecimal(value: number, digits: number): string {
  return Number.isInteger(value) ? String(value) : String(Number(value.toFixed(digits)));
}

/** `text` cut to `max` characters with an ellipsis, or unchanged when it fits. */
export function truncateText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
