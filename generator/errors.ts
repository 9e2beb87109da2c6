import type { InputIssue } from '../schemas/parse.ts';

/** A kind of build error: a permanent name, what it means, and what to do about it. */
export interface BuildErrorKind {
  title: string;
  hint: string;
}

/** Every kind of error a build can report. Names are permanent; docs and tests refer to them. */
export const BUILD_ERRORS = {
  RecordSyntax: {
    title: 'A record file is not valid YAML or JSON',
    hint: 'Fix the syntax at the line shown. Indentation and unquoted colons are the usual causes.',
  },
  RecordInvalid: {
    title: 'A record does not match its schema',
    hint: 'Compare the field with the record reference in catalog-data/README.md.',
  },
  DuplicateSlug: {
    title: 'Two records share a slug',
    hint: 'Slugs are path segments and must be unique where the message says; rename one of them.',
  },
  DanglingReference: {
    title: 'A record refers to something that does not exist',
    hint: 'Check the spelling of the slug or add the missing record.',
  },
  NoStorageLocation: {
    title: 'A source does not say which storage location it is in',
    hint: 'Give the source a storage_location; it may be left out only while storage-locations.yaml defines exactly one, or exactly one for the data folder (base_url "{storage_base_url}").',
  },
  ReservedSlug: {
    title: 'A slug collides with a fixed route',
    hint: 'Pick another slug; this one is a path the API already uses.',
  },
  MissingDataFile: {
    title: 'A source points at a data file that is not there',
    hint: 'Check the path against the data folder (GEOSHELF_DATA_DIR), or run `npm run sample-data` for the sample catalog.',
  },
  PathOutsideStorage: {
    title: 'A source path leads out of its storage location',
    hint: 'Give the path relative to the storage location (for the local one, the data folder GEOSHELF_DATA_DIR), with no ".." segment and no leading "/".',
  },
  IncompleteShapefile: {
    title: 'A shapefile is missing a file it cannot be read without',
    hint: 'Copy the .shx (the index of the shapes) and the .dbf (the attributes) beside the .shp, with the same name; the .prj and .cpg should travel with them too. A .shx can be rebuilt with GDAL: ogr2ogr -f "ESRI Shapefile" fixed.shp broken.shp --config SHAPE_RESTORE_SHX YES.',
  },
  UnreadableDataFile: {
    title: 'A data file could not be read',
    hint: 'Check that the file is a valid GeoParquet file (for example with DuckDB: SELECT * FROM read_parquet(...) LIMIT 1).',
  },
  UnreadablePmTiles: {
    title: 'A PMTiles source is not a readable PMTiles v3 archive',
    hint: 'The message says what is wrong with its header or metadata. Write the archive again (a copy cut short or a version 2 file are the usual causes); `pmtiles show <file>` from the pmtiles CLI reads the header too.',
  },
  TwinPathTaken: {
    title: 'A file sits where the build puts a PMTiles twin',
    hint: 'The build writes the twin of x.parquet to x.pmtiles beside it. Catalog that file as the version\'s pmtiles source (then the build uses it and makes no twin), or move it.',
  },
  UnknownColumn: {
    title: 'A record describes a column the data does not have',
    hint: 'Check the column name against the data (the schema route lists the real columns), or remove the description.',
  },
  LedgerFrozen: {
    title: 'The ledger is frozen, and a record is new, or gone without the ledger saying so',
    hint: 'Run the build once with GEOSHELF_LEDGER=update and commit catalog-data/ledger.json.',
  },
  LedgerInvalid: {
    title: 'The id ledger is damaged',
    hint: 'Restore catalog-data/ledger.json from version control; ids must never be edited by hand.',
  },
  DiskFull: {
    title: 'The disk that holds the built tree is full',
    hint: 'Free space on it, then build again: an incremental build needs room for its changed files beside dist/, a full build (or the first one) for a whole new tree. dist/ was left as it was and is still served.',
  },
} as const satisfies Record<string, BuildErrorKind>;

/** Name of a kind of build error. */
export type BuildErrorCode = keyof typeof BUILD_ERRORS;

/** One problem found by the build. */
export interface BuildIssue extends InputIssue {
  code: BuildErrorCode;
}

/** Raised when a build finds problems; carries every one of them. Nothing has been written when it is thrown. */
export class BuildError extends Error {
  readonly issues: BuildIssue[];
  /** The warnings of the stages that ran, for a check that prints them beside the problems. */
  readonly warnings: string[];
  constructor(issues: BuildIssue[], warnings: string[] = []) {
    super(`The build found ${issues.length} problem${issues.length === 1 ? '' : 's'}; dist/ was left as it was.`);
    this.name = 'BuildError';
    this.issues = issues;
    this.warnings = warnings;
  }
}

/** Tags plain input issues with a build error code. */
export function withCode(code: BuildErrorCode, issues: InputIssue[]): BuildIssue[] {
  return issues.map((issue) => ({ ...issue, code }));
}
