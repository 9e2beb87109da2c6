/**
 * A build's and a check's warnings as a person reads them: one line per kind. A warning is "subject: what"
 * (`towns/a.shp: it names no CRS …`); warnings that say the same thing of several subjects become one line
 * with their count and the first subjects, so ten shapefiles without a `.prj` do not drown a real problem.
 * A warning said of one subject only, or with no subject, is printed as it is.
 */

/** Subjects named in a grouped line; the rest are counted. */
const SUBJECTS_NAMED = 3;

/**
 * The warnings grouped by kind, in the order each kind first appears.
 * @example groupWarnings(['a.shp: no CRS', 'b.shp: no CRS']) // ['no CRS (2 files: a.shp, b.shp)']
 */
export function groupWarnings(warnings: string[]): string[] {
  const kinds = new Map<string, { subjects: string[]; first: string }>();
  for (const warning of warnings) {
    const split = splitWarning(warning);
    const key = split ? split.what : warning;
    const kind = kinds.get(key) ?? { subjects: [], first: warning };
    if (split) kind.subjects.push(split.subject);
    kinds.set(key, kind);
  }
  return [...kinds].map(([what, { subjects, first }]) => {
    if (subjects.length < 2) return first;
    const named = subjects.slice(0, SUBJECTS_NAMED).join(', ');
    const more = subjects.length > SUBJECTS_NAMED ? ` and ${subjects.length - SUBJECTS_NAMED} more` : '';
    return `${what} (${subjects.length} files: ${named}${more})`;
  });
}

/**
 * A warning's subject (a path, without spaces) and what it says of it; undefined for a warning of the whole
 * catalog ("12 columns of 3 files have no description: …").
 */
function splitWarning(warning: string): { subject: string; what: string } | undefined {
  const match = /^(\S+): (.+)$/s.exec(warning);
  return match ? { subject: match[1]!, what: match[2]! } : undefined;
}
