/**
 * A cell of an admin table (models, users). Below md a row stacks its cells and the header row
 * is for screen readers only, so each cell shows its column's name (its data-label) above its
 * value.
 */
export const STACKED_CELL =
  "block md:table-cell md:py-3 md:pr-4 before:block before:text-xs before:text-muted before:content-[attr(data-label)] md:before:content-none";
