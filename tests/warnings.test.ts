import { describe, expect, it } from 'vitest';
import { groupWarnings } from '../generator/warnings.ts';

describe('groupWarnings', () => {
  it('puts warnings that say the same of several files on one line, with the count and the first three', () => {
    const lines = groupWarnings([
      'a.shp: it names no CRS',
      'datasets/x.yaml: version 1 is older',
      'b.shp: it names no CRS',
      's3://bucket/c.shp: it names no CRS',
      'd.shp: it names no CRS',
      '12 columns of 3 files have no description: x (a, b)',
    ]);
    expect(lines).toEqual([
      'it names no CRS (4 files: a.shp, b.shp, s3://bucket/c.shp and 1 more)',
      'datasets/x.yaml: version 1 is older',
      '12 columns of 3 files have no description: x (a, b)',
    ]);
  });

  it('leaves a warning of one file as it is', () => {
    expect(groupWarnings(['a.shp: it names no CRS', 'b.shp: something else'])).toEqual(['a.shp: it names no CRS', 'b.shp: something else']);
  });
});
