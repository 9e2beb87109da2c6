import { TAG_SEPARATOR, type PagefindResultData } from './pagefind.ts';

/**
 * One result as a list item: the title linked to the dataset page, its collection, the excerpt with the
 * matched words marked, and its tags. Titles are `h2` so a screen reader can jump from result to result.
 */
export function renderResult(data: PagefindResultData): HTMLLIElement {
  const item = document.createElement('li');
  item.className = 'search-result';
  const heading = document.createElement('h2');
  heading.className = 'search-result-title';
  const link = document.createElement('a');
  link.href = data.url;
  link.textContent = data.meta.title || data.url;
  heading.append(link);
  item.append(heading);
  if (data.meta.collection) {
    const collection = document.createElement('p');
    collection.className = 'search-result-collection';
    collection.textContent = data.meta.collection;
    item.append(collection);
  }
  const excerpt = document.createElement('p');
  excerpt.className = 'search-result-excerpt';
  appendExcerpt(excerpt, data.excerpt);
  item.append(excerpt);
  const tags = (data.meta.tags ?? '').split(TAG_SEPARATOR).filter((tag) => tag !== '');
  if (tags.length > 0) item.append(renderTags(tags));
  return item;
}

/**
 * Copies an excerpt into `target` keeping only its text and `<mark>` elements. Pagefind escapes the text
 * already; rebuilding the nodes means a record's content can never inject markup, whatever it holds.
 */
export function appendExcerpt(target: HTMLElement, html: string): void {
  const template = document.createElement('template');
  template.innerHTML = html;
  for (const node of template.content.childNodes) {
    if (node.nodeType === Node.TEXT_NODE) {
      target.append(node.textContent ?? '');
    } else if (node.nodeName === 'MARK') {
      const mark = document.createElement('mark');
      mark.textContent = node.textContent;
      target.append(mark);
    } else {
      target.append(node.textContent ?? '');
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
