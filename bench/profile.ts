import fs from 'node:fs';

// `npx tsx bench/profile.ts <file.cpuprofile> [top]`: the V8 CPU profile the server wrote under
// BENCH_CPU_PROF as a table of the functions that used the most CPU, by self time and by total
// (self plus callees) time, so a round of performance work starts from data.

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, '~/')
    .replace(/^.*\/(src|bench)\//, '$1/');
  return `${functionName || '(anonymous)'} ${file ? `${file}:${lineNumber + 1}` : ''}`.trim();
}

export function topFrames(profile: CpuProfile, top: number): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const selfByName = new Map<string, number>();
  const totalByName = new Map<string, number>();
  for (const [id, micros] of self) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const node = byId.get(at);
      if (!node) break;
      const name = frameName(node);
      if (at === id) selfByName.set(name, (selfByName.get(name) ?? 0) + micros);
      // A recursive frame counts once per sample in the total.
      if (!seen.has(name)) totalByName.set(name, (totalByName.get(name) ?? 0) + micros);
      seen.add(name);
    }
  }
  const all = [...self.values()].reduce((a, b) => a + b, 0);
  const idle = [...selfByName].filter(([n]) => n.startsWith('(idle)')).reduce((a, [, v]) => a + v, 0);
  const busy = all - idle;
  const pct = (v: number) => `${((100 * v) / busy).toFixed(1)} %`;
  const table = (title: string, entries: Map<string, number>) =>
    [
      `| ${title} | share of busy CPU |`,
      '|---|---|',
      ...[...entries]
        .filter(([n]) => !n.startsWith('(idle)') && !n.startsWith('(root)') && !n.startsWith('(program)'))
        .sort((a, b) => b[1] - a[1])
        .slice(0, top)
        .map(([n, v]) => `| \`${n.replace(/\|/g, '\\|')}\` | ${pct(v)} |`),
    ].join('\n');
  return [
    `busy ${(busy / 1e6).toFixed(1)} s of ${(all / 1e6).toFixed(1)} s sampled`,
    '',
    table('self time', selfByName),
    '',
    table('total time', totalByName),
  ].join('\n');
}

const [file, top] = process.argv.slice(2);
if (file === undefined) {
  console.error('usage: npx tsx bench/profile.ts <file.cpuprofile> [top]');
  process.exitCode = 2;
} else {
  console.log(topFrames(JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile, Number(top ?? 25)));
}
