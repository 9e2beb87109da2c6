import { z } from 'zod';
import spdxIds from 'spdx-license-ids/index.json' with { type: 'json' };

const SPDX_IDS = new Set<string>(spdxIds);

/** Whether a licence is an SPDX licence identifier (rather than the URL of its terms). */
export function isSpdxLicense(license: string): boolean {
  return SPDX_IDS.has(license);
}

/**
 * The licence of the data: an SPDX identifier (`CC-BY-4.0`, `ODbL-1.0`) or the URL of the terms, for data under
 * terms SPDX does not list.
 */
export const LicenseSchema = z
  .string()
  .trim()
  .refine((value) => SPDX_IDS.has(value) || /^https?:\/\/\S+$/.test(value), 'must be an SPDX licence identifier such as CC-BY-4.0 (https://spdx.org/licenses/) or the http(s) URL of the terms')
  .describe('SPDX licence identifier, or the URL of the terms.');

/** What a provider did for the data: STAC's provider roles. */
export const ProviderRoleSchema = z.enum(['licensor', 'producer', 'processor', 'host']);

/** An organisation or person that made, processed, licenses or hosts the data. */
export const ProviderSchema = z
  .strictObject({
    name: z.string().trim().min(1),
    roles: z.array(ProviderRoleSchema).min(1).optional().describe('licensor, producer, processor or host.'),
    url: z.url({ protocol: /^https?$/ }).optional().describe('Home page of the provider.'),
    description: z.string().trim().min(1).optional(),
  });

/** A calendar date (`2024-05-01`) or a timestamp without timezone, in UTC. */
const CoverageInstantSchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2})?$/, 'must be a date such as 2024-05-01, or 2024-05-01T00:00:00 (UTC, no timezone)')
  .refine((value) => !Number.isNaN(Date.parse(value.length === 10 ? `${value}T00:00:00Z` : `${value}Z`)), 'is not a real date');

/** The time the data describes, distinct from when its records changed; no `end` while it is ongoing. */
export const TemporalCoverageSchema = z
  .strictObject({
    start: CoverageInstantSchema,
    end: CoverageInstantSchema.optional().describe('Absent while the data is still being added to.'),
  })
  .refine((coverage) => coverage.end === undefined || coverage.start.slice(0, 10) <= coverage.end.slice(0, 10), 'start must not be after end');

/** A DOI without its resolver: `10.5281/zenodo.1234567`. */
export const DoiSchema = z
  .string()
  .trim()
  .regex(/^10\.\d{4,9}\/\S+$/, 'must be a DOI such as 10.5281/zenodo.1234567, without https://doi.org/');

/**
 * What a record may say about its data beyond names and files: licence, providers, citation, DOI, keywords and
 * temporal coverage. A dataset takes the licence, providers and citation of its collection when it gives none; a
 * DOI, keywords and a coverage are its own.
 */
export const aboutFields = {
  license: LicenseSchema.optional(),
  providers: z.array(ProviderSchema).min(1).optional().describe('Who produced, processed, licenses or hosts the data.'),
  citation: z.string().trim().min(1).optional().describe('How to cite the data, as text.'),
  doi: DoiSchema.optional().describe('DOI of the data, without the resolver.'),
  keywords: z.array(z.string().trim().min(1)).min(1).optional().describe('Words a search engine or a portal files the data under.'),
  temporal_coverage: TemporalCoverageSchema.optional().describe('The time the data describes.'),
};

/** The about fields as an object, for the model and the documents. */
export const AboutSchema = z.object(aboutFields);

/** What a record says about its data. */
export type About = z.infer<typeof AboutSchema>;
/** A provider of the data. */
export type Provider = z.infer<typeof ProviderSchema>;
/** The time the data describes. */
export type TemporalCoverage = z.infer<typeof TemporalCoverageSchema>;

const ABOUT_FIELDS = ['license', 'providers', 'citation', 'doi', 'keywords', 'temporal_coverage'] as const satisfies readonly (keyof About)[];

/** The about fields a record or model object gives, in the record schema's order, leaving out those it does not. */
export function pickAbout(about: About): About {
  const picked: About = {};
  for (const field of ABOUT_FIELDS) if (about[field] !== undefined) Object.assign(picked, { [field]: about[field] });
  return picked;
}

/** The URL of a DOI at its resolver. */
export function doiUrl(doi: string): string {
  return `https://doi.org/${doi}`;
}

/** A licence as a link title: its SPDX identifier, or "Terms of use" for a URL. */
export function licenseTitle(license: string): string {
  return isSpdxLicense(license) ? license : 'Terms of use';
}

/** The URL of a licence's terms: its SPDX page for an SPDX identifier. */
export function licenseUrl(license: string): string {
  return isSpdxLicense(license) ? `https://spdx.org/licenses/${license}.html` : license;
}
