import { SqlParser } from '../query/validate-sql.ts';
const parser = await SqlParser.create();
const t: number[] = [];
for (let i = 0; i < 200; i++) {
  const sql = `SELECT id, score, colour, zone FROM points WHERE score > ${i} AND colour = 'red' ORDER BY score DESC`;
  const s = performance.now(); const r = await parser.check(sql, ['points']); t.push(performance.now() - s);
  if (!r.ok) throw new Error(JSON.stringify(r));
}
t.sort((a, b) => a - b); console.log('check (new SQL each time) p50', t[100]!.toFixed(2), 'p90', t[180]!.toFixed(2));
parser.close();
