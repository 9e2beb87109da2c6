import { z } from 'zod';

/** Data dictionary entry of one column (contract: ColumnSchema). */
export const ColumnSchemaSchema = z
  .object({
    name: z.string().describe('Column name as stored in the file.'),
    type: z.string().describe('Logical type: geometry, integer, float, string, boolean, date, timestamp, …'),
    nullable: z.boolean().describe('Whether the column may hold nulls.'),
    description: z.string().nullable().optional().describe('What the column holds, written by a data steward.'),
    num_null_values: z.number().nullable().optional().describe('Rows where the value is null.'),
    num_unique_values: z.number().nullable().optional().describe('Distinct non-null values.'),
    example_values: z.array(z.string()).nullable().optional().describe('A few values, chosen deterministically.'),
    min: z.number().nullable().optional().describe('Smallest value of a numeric column.'),
    max: z.number().nullable().optional().describe('Largest value of a numeric column.'),
    length: z.number().nullable().optional().describe('Longest text value, in characters.'),
    possible_values: z.array(z.string()).nullable().optional().describe('Every value of a low-cardinality text column.'),
  })
  .meta({ id: 'ColumnSchema' });

/** A column of the data dictionary. */
export type ColumnSchema = z.infer<typeof ColumnSchemaSchema>;
