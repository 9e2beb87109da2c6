/**
 * The dataset picker: a text input that filters the catalog's datasets, following the ARIA 1.2 combobox
 * pattern (list autocomplete, `aria-activedescendant`). The list is fetched when the input is first used.
 */
import { filterDatasets, loadDatasetList, type DatasetEntry } from './source-catalog.ts';

/** Options shown at once; more matches ask the person to type more. */
const MAX_OPTIONS = 50;

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
  let entries: DatasetEntry[] | undefined;
  let shown: DatasetEntry[] = [];
  let active = -1;

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

  const render = () => {
    if (!entries) return;
    const { matches, total } = filterDatasets(entries, input.value, MAX_OPTIONS);
    shown = matches;
    listbox.replaceChildren(...matches.map(renderOption));
    listbox.hidden = matches.length === 0;
    input.setAttribute('aria-expanded', String(matches.length > 0));
    input.removeAttribute('aria-activedescendant');
    active = -1;
    status.textContent = total === 0
      ? 'No dataset matches.'
      : total > matches.length ? `${total} datasets match; the first ${matches.length} are listed, type more to narrow.` : `${total} ${total === 1 ? 'dataset matches' : 'datasets match'}.`;
  };

  const ensureLoaded = async () => {
    if (entries) return;
    status.textContent = 'Loading the list of datasets…';
    try {
      entries = await loadDatasetList();
      if (document.activeElement === input) render();
      else status.textContent = '';
    } catch (error) {
      status.textContent = `The list of datasets could not be loaded: ${(error as Error).message}`;
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

  input.addEventListener('focus', () => void ensureLoaded());
  input.addEventListener('input', () => (entries ? render() : void ensureLoaded()));
  input.addEventListener('blur', close);
  input.addEventListener('keydown', (event) => {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      if (listbox.hidden) render();
      if (shown.length === 0) return;
      const step = event.key === 'ArrowDown' ? 1 : -1;
      setActive(active === -1 ? (step > 0 ? 0 : shown.length - 1) : (active + step + shown.length) % shown.length);
    } else if (event.key === 'Enter') {
      // Enter picks (the active option, or the only match) and never submits the add-source form from here.
      event.preventDefault();
      if (!listbox.hidden && active >= 0) pick(active);
      else if (!listbox.hidden && shown.length === 1) pick(0);
    } else if (event.key === 'Escape') {
      if (!listbox.hidden) close();
      else input.value = '';
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
      input.value = '';
      status.textContent = '';
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
