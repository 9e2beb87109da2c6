import { checkCql2 } from '../../cql2/check.ts';
import { Cql2Error, type Cql2Expression } from '../../cql2/expression.ts';
import { describeCql2Error, readCql2Filter, type Cql2Language } from '../../cql2/read-filter.ts';
import type { ParseOutcome } from '../route-table.ts';
import type { FeatureLayer } from './layers.ts';

/**
 * Reads the `filter` of an items request in its `filter-lang`, and checks it against what the collection has
 * (its `filterables`). A filter that does not parse, names a property the collection lacks, or compares what does
 * not compare is a failure naming where: the character of the text, or the JSON pointer.
 */
export function readItemsFilter(layer: FeatureLayer, text: string, lang: Cql2Language | 'cql-text'): ParseOutcome<Cql2Expression> {
  const language = lang === 'cql-text' ? 'cql2-text' : lang;
  try {
    // GDAL 3.6 names the encoding cql-text, and sends OGR SQL's ILIKE in it.
    const expression = readCql2Filter(text, language, { ilike: lang === 'cql-text' });
    checkCql2(expression, layer.filterables);
    return { ok: true, value: expression };
  } catch (error) {
    if (!(error instanceof Cql2Error)) throw error;
    return { ok: false, name: 'filter', detail: `filter ${describeCql2Error(error, language)}` };
  }
}
