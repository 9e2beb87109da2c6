import { checkCql2 } from '../../cql2/check.ts';
import { Cql2Error, type Cql2Expression } from '../../cql2/expression.ts';
import { parseCql2Text } from '../../cql2/parse-text.ts';
import { readCql2Json } from '../../cql2/read-json.ts';
import type { ParseOutcome } from '../route-table.ts';
import type { FeatureLayer } from './layers.ts';

/**
 * Reads the `filter` of an items request in its `filter-lang`, and checks it against what the collection has
 * (its `filterables`). A filter that does not parse, names a property the collection lacks, or compares what does
 * not compare is a failure naming where: the character of the text, or the JSON pointer.
 */
export function readItemsFilter(layer: FeatureLayer, text: string, lang: 'cql2-text' | 'cql2-json' | 'cql-text'): ParseOutcome<Cql2Expression> {
  try {
    const expression = lang === 'cql2-json' ? readCql2Json(parseJson(text)) : parseCql2Text(text);
    checkCql2(expression, layer.filterables);
    return { ok: true, value: expression };
  } catch (error) {
    if (!(error instanceof Cql2Error)) throw error;
    const where = error.pointer ? ` (at ${error.pointer} of the ${lang === 'cql2-json' ? 'JSON' : 'filter, as JSON'})` : '';
    return { ok: false, name: 'filter', detail: `filter (${lang}): ${error.message}${where}` };
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Cql2Error(`not JSON: ${(error as Error).message}`);
  }
}
