/** A comparison of two time bounds. */
export type TimeComparison = '<' | '<=' | '=' | '>' | '>=';

/** Which bound of a time span: its begin (an instant's is itself) or its end. */
export type SpanBound = 'begin' | 'end';

/**
 * The temporal functions of CQL2 as comparisons of the bounds of their two operands, all of which hold (or, for
 * `negate`, not all), as the standard's table defines them. Both the SQL compiler and the in-memory evaluator read it.
 */
export const TEMPORAL_RELATIONS: Readonly<Record<string, { all: [SpanBound, TimeComparison, SpanBound][]; negate?: true }>> = {
  t_after: { all: [['begin', '>', 'end']] },
  t_before: { all: [['end', '<', 'begin']] },
  t_contains: { all: [['begin', '<', 'begin'], ['end', '>', 'end']] },
  t_disjoint: { all: [['begin', '<=', 'end'], ['end', '>=', 'begin']], negate: true },
  t_during: { all: [['begin', '>', 'begin'], ['end', '<', 'end']] },
  t_equals: { all: [['begin', '=', 'begin'], ['end', '=', 'end']] },
  t_finishedBy: { all: [['begin', '<', 'begin'], ['end', '=', 'end']] },
  t_finishes: { all: [['begin', '>', 'begin'], ['end', '=', 'end']] },
  t_intersects: { all: [['begin', '<=', 'end'], ['end', '>=', 'begin']] },
  t_meets: { all: [['end', '=', 'begin']] },
  t_metBy: { all: [['begin', '=', 'end']] },
  t_overlappedBy: { all: [['begin', '>', 'begin'], ['begin', '<', 'end'], ['end', '>', 'end']] },
  t_overlaps: { all: [['begin', '<', 'begin'], ['end', '>', 'begin'], ['end', '<', 'end']] },
  t_startedBy: { all: [['begin', '=', 'begin'], ['end', '>', 'end']] },
  t_starts: { all: [['begin', '=', 'begin'], ['end', '<', 'end']] },
};
