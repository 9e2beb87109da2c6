import type { ExcerptPart } from '../../../core/search/excerpt.ts';
import type { SearchResultView } from './search-engine.ts';

/**
 * One result as a list item: the title linked to the dataset page, its collection, the excerpt with the
 * matched words marked, and its tags. Titles are `h2` so a screen reader can jump from result to result.
 */
export function renderResult(data: SearchResultView): HTMLLIElement {
  const item = document.createElement('li');
  item.className = 'search-result';
  const heading = document.createElement('h2');
  heading.className = 'search-result-title';
  const link = document.createElement('a');
  link.href = data.url;
  link.textContent = data.title || data.url;
  heading.append(link);
  item.append(heading);
  if (data.collection) {
    const collection = document.createElement('p');
    collection.className = 'search-result-collection';
    collection.textContent = data.collection;
    item.append(collection);
  }
  if (data.excerpt.length > 0) {
    const excerpt = document.createElement('p');
    excerpt.className = 'search-result-excerpt';
    appendExcerpt(excerpt, data.excerpt);
    item.append(excerpt);
  }
  if (data.tags.length > 0) item.append(renderTags(data.tags));
  return item;
}

/**
 * Writes an excerpt into `target` as text nodes and `<mark>` elements. Nothing is parsed as HTML, so a
 * dataset's text shows as written, whatever characters it holds.
 */
export function appendExcerpt(target: HTMLElement, parts: readonly ExcerptPart[]): void {
  for (const part of parts) {
    if (part.marked) {
      const mark = document.createElement('mark');
      mark.textContent = part.text;
      target.append(mark);
    } else {
      target.append(part.text);
    }
  }
}

function renderTags(tags: string[]): HTMLUListElement {
  const list = document.createElement('ul');
  list.className = 'tags search-result-tags';
  list.setAttribute('aria-label', 'Tags');
  for (const tag of tags) {
    const entry = document.createElement('li');
    const label = document.createElement('span');
    label.className = 'tag';
    label.textContent = tag;
    entry.append(label);
    list.append(entry);
  }
  return list;
}
