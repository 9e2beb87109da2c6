import { describe, expect, it } from 'vitest';
import { addLongitude, addLonInterval, createLonExtent, finishLonExtent, type LonExtent } from '../core/geo/lon-extent.ts';

/** A point is a longitude, a part is [west, east]. */
type Part = number | [number, number];

function add(extent: LonExtent, parts: Part[]): LonExtent {
  for (const part of parts) {
    if (typeof part === 'number') addLongitude(extent, part);
    else addLonInterval(extent, part[0], part[1]);
  }
  return extent;
}

const extentOf = (parts: Part[]) => finishLonExtent(add(createLonExtent(), parts));

describe('the longitude extent of parts on the circle', () => {
  it.each<[string, Part[], [number, number] | null]>([
    ['Fiji, cut at the antimeridian, crosses it', [[177.28, 180], [178.6, 179.2], [-180, -179.79]], [177.28, -179.79]],
    ['points on both sides of ±180° cross it', [179.5, -179.2, 178, -179.9], [178, -179.2]],
    ['parts touching exactly ±180 cross it', [[170, 180], [-180, -170]], [170, -170]],
    ['Russia, from Kaliningrad east to Chukotka, crosses it', [[19.64, 180], [-180, -169.05], [27.3, 68.2]], [19.64, -169.05]],
    ['a single part is its own extent', [[10.5, 20.25]], [10.5, 20.25]],
    ['a single point is its own extent', [-33.25], [-33.25, -33.25]],
    ['parts on one side of ±180° keep the plain extent', [[-10, 5], 40, [100, 120]], [-10, 120]],
    ['Antarctica and Fiji together go round the world', [[-180, 180], [177.28, 180], [-180, -179.79]], [-180, 180]],
    ['a part wider than 180° is taken as it is, not as wrapping', [[-179, 179]], [-179, 179]],
    ['world-wide points whose widest gap is not at ±180° keep the plain extent', [-179.1, -150, -120, -60, 0, 60, 120, 179.3], [-179.1, 179.3]],
    ['a gap of exactly 180° is not enough to cross', [10, -170], [-170, 10]],
    ['longitudes beyond ±180 keep the plain extent, so they still show', [170, 190], [170, 190]],
    ['two points within one degree across ±180°', [179.95, -179.95], [179.95, -179.95]],
    ['a box already written across ±180° counts as its two halves', [[170, -170], [175, 176]], [170, -170]],
    ['nothing added gives no extent', [], null],
  ])('%s', (_name, parts, expected) => {
    expect(extentOf(parts)).toEqual(expected);
  });

  it('does not depend on the order of the parts', () => {
    const parts: Part[] = [[177.28, 180], 179.5, [-180, -179.79], [178.6, 179.2], -179.9];
    expect(extentOf([...parts].reverse())).toEqual(extentOf(parts));
  });

  it('stays exact for a million points in a narrow band across ±180°', () => {
    const wrap = (lon: number) => ((lon + 180) % 360) - 180;
    const extent = createLonExtent();
    for (let index = 0; index < 1_000_000; index++) addLongitude(extent, wrap(179 + (index % 2000) / 1000));
    expect(finishLonExtent(extent)).toEqual([179, wrap(179 + 1999 / 1000)]);
  });
});
