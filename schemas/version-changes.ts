import { z } from 'zod';

const FromTo = <T extends z.ZodType>(value: T) => z.object({ from: value, to: value });
const BoundsSchema = z.tuple([z.number(), z.number(), z.number(), z.number()]).nullable();

/** What changed from one version of a file to the next, as the build reads it from both versions' data. */
export const VersionChangesSchema = z
  .object({
    version: z.string().describe('The newer version.'),
    previous: z.string().describe('The version before it.'),
    columns: z.object({
      added: z.array(z.object({ name: z.string(), type: z.string() })),
      removed: z.array(z.object({ name: z.string(), type: z.string() })),
      retyped: z.array(z.object({ name: z.string(), from: z.string(), to: z.string() })),
    }),
    row_count: FromTo(z.number().nullable()).nullable().describe('Rows before and after; null when unchanged.'),
    bounds: FromTo(BoundsSchema).nullable().describe('WGS84 extent before and after; null when unchanged.'),
    invalid_geometry_count: FromTo(z.number().nullable()).nullable().describe('Invalid geometries before and after; null when unchanged.'),
    statistics: z
      .array(z.object({ column: z.string(), statistic: z.enum(['min', 'max', 'num_null_values', 'num_unique_values', 'length']), from: z.number().nullable(), to: z.number().nullable() }))
      .describe('Statistics of the columns both versions have that moved.'),
  })
  .meta({ id: 'VersionChanges' });

/** What changed from one version of a file to the next. */
export type VersionChanges = z.infer<typeof VersionChangesSchema>;
