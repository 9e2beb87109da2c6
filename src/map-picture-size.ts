/**
 * Size of the build's picture of a file's map (generator/emit/site/map-picture.ts), in CSS pixels: the 3:2 frame
 * the file page gives its map (src/styles/preview.css), at the largest width it takes.
 */
export const MAP_PICTURE_SIZE = { width: 768, height: 512 } as const;

/** Name of the picture beside a file page's index.html. */
export const MAP_PICTURE_FILE = 'map.svg';
