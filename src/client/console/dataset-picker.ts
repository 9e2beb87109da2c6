/**
 * The dataset picker: a text input that searches the catalog's datasets, following the ARIA 1.2 combobox pattern
 * (list autocomplete, `aria-activedescendant`). The site's full-text index answers (`searchDatasets`), so the
 * picker fetches what the words typed need rather than a list of every dataset.
 */
import { searchDatasets, type DatasetEntry } from './source-catalog.ts';

/** Options shown at once (each costs a small fetch); more matches ask the person to type more. */
const MAX_OPTIONS = 20;
/** Wait after the last key before searching. */
const DEBOUNCE_MS = 120;

/** The elements of the picker (from ConsoleApp.astro) and what to do with a picked dataset. */
export interface DatasetPickerOptions {
  input: HTMLInputElement;
  listbox: HTMLElement;
  /** A polite live region that says how many datasets match. */
  status: HTMLElement;
  onPick: (entry: DatasetEntry) => void;
}

/** Wires the picker; returns a function that empties it. */
export function createDatasetPicker({ input, listbox, status, onPick }: DatasetPickerOptions): { clear(): void } {
  let shown: DatasetEntry[] = [];
  let active = -1;
  // Each search takes a new generation; an answer that arrives after a newer search started is dropped.
  let generation = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const close = () => {
    listbox.hidden = true;
    input.setAttribute('aria-expanded', 'false');
    input.removeAttribute('aria-activedescendant');
    active = -1;
  };

  const setActive = (index: number) => {
    active = index;
    listbox.querySelectorAll('[role="option"]').forEach((option, position) => {
      option.setAttribute('aria-selected', String(position === index));
      if (position === index) {
        input.setAttribute('aria-activedescendant', option.id);
        option.scrollIntoView({ block: 'nearest' });
      }
    });
  };

  const show = (matches: DatasetEntry[]) => {
    shown = matches;
    listbox.replaceChildren(...matches.map(renderOption));
    listbox.hidden = matches.length === 0 || document.activeElement !== input;
    input.setAttribute('aria-expanded', String(!listbox.hidden));
    input.removeAttribute('aria-activedescendant');
    active = -1;
  };

  const search = async () => {
    clearTimeout(timer);
    const mine = ++generation;
    const query = input.value;
    if (query.trim().length < 2) {
      // One letter would match only the words that are that letter (core/search/terms.ts MIN_PREFIX_LENGTH).
      show([]);
      status.textContent = query.trim() === '' ? '' : 'Type two letters or more.';
      return;
    }
    try {
      const { matches, total } = await searchDatasets(query, MAX_OPTIONS);
      if (mine !== generation) return;
      show(matches);
      status.textContent = total === 0
        ? 'No dataset matches.'
        : total > matches.length ? `${total} datasets match; the best ${matches.length} are listed, type more to narrow.` : `${total} ${total === 1 ? 'dataset matches' : 'datasets match'}.`;
    } catch (error) {
      if (mine !== generation) return;
      show([]);
      status.textContent = `The datasets could not be searched: ${(error as Error).message}`;
    }
  };

  const pick = (index: number) => {
    const entry = shown[index];
    if (!entry) return;
    input.value = entry.name;
    close();
    status.textContent = `Picked ${entry.name}.`;
    onPick(entry);
  };

  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => void search(), DEBOUNCE_MS);
  });
  input.addEventListener('focus', () => {
    if (shown.length === 0) return;
    listbox.hidden = false;
    input.setAttribute('aria-expanded', 'true');
  });
  input.addEventListener('blur', close);
  input.addEventListener('keydown', (event) => {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      if (shown.length === 0) return;
      if (listbox.hidden) {
        listbox.hidden = false;
        input.setAttribute('aria-expanded', 'true');
      }
      const step = event.key === 'ArrowDown' ? 1 : -1;
      setActive(active === -1 ? (step > 0 ? 0 : shown.length - 1) : (active + step + shown.length) % shown.length);
    } else if (event.key === 'Enter') {
      // Enter picks (the active option, or the only match) and never submits the add-source form from here.
      event.preventDefault();
      if (!listbox.hidden && active >= 0) pick(active);
      else if (!listbox.hidden && shown.length === 1) pick(0);
    } else if (event.key === 'Escape') {
      if (!listbox.hidden) close();
      else {
        input.value = '';
        void search();
      }
    }
  });
  // mousedown, not click: keeps focus in the input, so blur does not close the list before the pick.
  listbox.addEventListener('mousedown', (event) => {
    const option = (event.target as Element).closest('[role="option"]');
    if (!option) return;
    event.preventDefault();
    pick(Number((option as HTMLElement).dataset.index));
  });

  return {
    clear: () => {
      clearTimeout(timer);
      generation++;
      input.value = '';
      status.textContent = '';
      shown = [];
      close();
    },
  };
}

function renderOption(entry: DatasetEntry, index: number): HTMLElement {
  const option = document.createElement('li');
  option.id = `console-dataset-option-${index}`;
  option.setAttribute('role', 'option');
  option.setAttribute('aria-selected', 'false');
  option.dataset.index = String(index);
  const name = document.createElement('span');
  name.className = 'console-option-name';
  name.textContent = entry.name;
  const collection = document.createElement('span');
  collection.className = 'console-option-detail';
  collection.textContent = entry.collectionName;
  option.append(name, ' ', collection);
  return option;
}
