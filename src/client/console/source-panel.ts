/**
 * The sources panel: pick dataset → file → version, name it with an alias, add it (up to eight), remove it.
 * Holds the list of picked sources; the console app reads it and hears of every change.
 */
import { createDatasetPicker } from './dataset-picker.ts';
import { formatBytes } from '../../format.ts';
import { loadQuerySources, type ConsoleSource } from './source-catalog.ts';
import { ALIAS_PATTERN, MAX_SOURCES, suggestAlias } from './url-state.ts';
import type { SiteQuerySources } from '../../../schemas/site.ts';

/** What the console app does with the panel. */
export interface SourcePanel {
  /** The picked sources, in order. */
  list(): ConsoleSource[];
  /** Replaces the list (a restored link), without calling `onChange`. */
  replace(sources: ConsoleSource[]): void;
  /** Marks the source an error names, or none. */
  mark(alias: string | null): void;
}

/** Options of {@link createSourcePanel}. */
export interface SourcePanelOptions {
  /** Largest file, in bytes, that in-browser SQL reads. */
  browserLimitBytes: number;
  onChange: (sources: ConsoleSource[]) => void;
}

/** Wires the sources panel inside `root` (the console element of ConsoleApp.astro). */
export function createSourcePanel(root: HTMLElement, { browserLimitBytes, onChange }: SourcePanelOptions): SourcePanel {
  const find = <T extends Element>(selector: string) => root.querySelector<T>(selector)!;
  const form = find<HTMLFormElement>('[data-add-source]');
  const fileSelect = find<HTMLSelectElement>('[data-file]');
  const versionSelect = find<HTMLSelectElement>('[data-version]');
  const aliasInput = find<HTMLInputElement>('[data-alias]');
  const addButton = find<HTMLButtonElement>('[data-add-button]');
  const addStatus = find<HTMLElement>('[data-add-status]');
  const listElement = find<HTMLUListElement>('[data-source-list]');
  const emptyNote = find<HTMLElement>('[data-source-empty]');
  let sources: ConsoleSource[] = [];
  let picked: SiteQuerySources | undefined;
  let aliasEdited = false;

  const picker = createDatasetPicker({
    input: find('[data-dataset-input]'),
    listbox: find('[data-dataset-options]'),
    status: find('[data-dataset-status]'),
    onPick: async (entry) => {
      picked = undefined;
      fillSelect(fileSelect, []);
      fillSelect(versionSelect, []);
      try {
        picked = await loadQuerySources(entry.collection, entry.dataset);
      } catch (error) {
        addStatus.textContent = `The files of ${entry.name} could not be loaded: ${(error as Error).message}`;
        return updateForm();
      }
      fillSelect(fileSelect, picked.files.map((file) => ({
        value: file.slug, label: file.versions.length ? file.name : `${file.name} (no queryable version)`, disabled: !file.versions.length,
      })));
      fileSelect.selectedIndex = Math.max(0, picked.files.findIndex((file) => file.versions.length > 0));
      if (!picked.files.some((file) => file.versions.length > 0)) addStatus.textContent = `${entry.name} has no GeoParquet file, so it cannot be queried.`;
      aliasEdited = false;
      onFileChange();
    },
  });

  const currentFile = () => picked?.files.find((file) => file.slug === fileSelect.value);

  const onFileChange = () => {
    const file = currentFile();
    fillSelect(versionSelect, (file?.versions ?? []).map((version) => ({
      value: version.version,
      label: [version.version, version.format, version.bytes === null ? null : formatBytes(version.bytes)].filter(Boolean).join(' · '),
    })));
    if (file && !aliasEdited) aliasInput.value = suggestAlias(file.slug, sources.map((source) => source.alias));
    updateForm();
  };

  const updateForm = () => {
    const full = sources.length >= MAX_SOURCES;
    const ready = !!currentFile()?.versions.length && !full;
    fileSelect.disabled = !picked;
    versionSelect.disabled = !ready;
    addButton.disabled = !ready;
    if (full) addStatus.textContent = `A query reads at most ${MAX_SOURCES} sources; remove one to add another.`;
  };

  const render = () => {
    listElement.replaceChildren(...sources.map((source) => renderSource(source, browserLimitBytes)));
    emptyNote.hidden = sources.length > 0;
    updateForm();
  };

  fileSelect.addEventListener('change', onFileChange);
  aliasInput.addEventListener('input', () => {
    aliasEdited = true;
    aliasInput.setCustomValidity('');
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const file = currentFile();
    const version = file?.versions.find((candidate) => candidate.version === versionSelect.value);
    if (!picked || !file || !version) return;
    const alias = aliasInput.value.trim();
    const problem = !ALIAS_PATTERN.test(alias)
      ? 'An alias is 1 to 63 letters, digits or _, and does not start with a digit.'
      : sources.some((source) => source.alias.toLowerCase() === alias.toLowerCase()) ? `The alias ${alias} is already used; choose another.` : '';
    aliasInput.setCustomValidity(problem);
    aliasInput.setAttribute('aria-invalid', String(problem !== ''));
    if (problem) {
      addStatus.textContent = problem;
      aliasInput.focus();
      return;
    }
    sources = [...sources, { alias, collection: picked.collection, dataset: picked.dataset, file, version }];
    addStatus.textContent = `Added ${file.name} as ${alias}.`;
    picked = undefined;
    picker.clear();
    fillSelect(fileSelect, []);
    fillSelect(versionSelect, []);
    aliasInput.value = '';
    render();
    onChange(sources);
  });
  listElement.addEventListener('click', (event) => {
    const button = (event.target as Element).closest<HTMLButtonElement>('button[data-remove]');
    if (!button) return;
    const index = sources.findIndex((source) => source.alias === button.dataset.remove);
    const [removed] = sources.splice(index, 1);
    sources = [...sources];
    render();
    addStatus.textContent = `Removed ${removed!.alias}.`;
    const next = listElement.querySelectorAll<HTMLButtonElement>('button[data-remove]')[Math.min(index, sources.length - 1)];
    (next ?? find<HTMLInputElement>('[data-dataset-input]')).focus();
    onChange(sources);
  });
  render();

  return {
    list: () => sources,
    replace: (next) => {
      sources = [...next];
      render();
    },
    mark: (alias) => {
      for (const item of listElement.children) {
        const marked = alias !== null && (item as HTMLElement).dataset.alias?.toLowerCase() === alias.toLowerCase();
        item.classList.toggle('console-source-marked', marked);
      }
    },
  };
}

function fillSelect(select: HTMLSelectElement, options: { value: string; label: string; disabled?: boolean }[]): void {
  select.replaceChildren(...options.map(({ value, label, disabled }) => {
    const option = new Option(label, value);
    option.disabled = disabled ?? false;
    return option;
  }));
}

function renderSource(source: ConsoleSource, browserLimitBytes: number): HTMLLIElement {
  const item = document.createElement('li');
  item.className = 'console-source';
  item.dataset.alias = source.alias;
  const title = document.createElement('p');
  const alias = document.createElement('code');
  alias.textContent = source.alias;
  const link = document.createElement('a');
  link.href = `/collections/${source.collection.slug}/datasets/${source.dataset.slug}/files/${source.file.slug}/`;
  link.textContent = `${source.dataset.name} › ${source.file.name}`;
  title.append(alias, ' ', link);
  const detail = document.createElement('p');
  detail.className = 'console-hint';
  const { version, format, bytes, row_count: rows } = source.version;
  const inBrowser = bytes !== null && bytes <= browserLimitBytes ? 'can run in this browser' : 'too large to run in this browser';
  detail.textContent = [`version ${version}`, format, bytes === null ? 'size unknown' : formatBytes(bytes), rows === null ? null : `${rows.toLocaleString('en')} rows`, inBrowser]
    .filter(Boolean).join(' · ');
  const remove = document.createElement('button');
  remove.type = 'button';
  remove.dataset.remove = source.alias;
  remove.textContent = 'Remove';
  remove.setAttribute('aria-label', `Remove source ${source.alias}`);
  item.append(title, detail, remove);
  return item;
}
