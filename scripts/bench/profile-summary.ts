// Summarizes V8 CPU profiles (.cpuprofile, from `npm run bench -- --profile DIR`): per file, the busiest functions
// by self time and the busiest packages/files, so "where does the worker's CPU go" has an answer in numbers.
//   npx tsx scripts/bench/profile-summary.ts DIR [top=25]
import fs from 'node:fs';
import path from 'node:path';
import { printTables, fmtNum, pct } from './table';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

interface ProfileSummary {
  file: string;
  totalMs: number;
  idleMs: number;
  byFunction: { name: string; ms: number }[];
  byModule: { name: string; ms: number }[];
}

/** node_modules/<pkg> (scoped too), a project path, or a V8 category like (garbage collector). */
function moduleOf(url: string, functionName: string): string {
  if (!url) return `(${functionName || 'native'})`.replace(/^\(\((.*)\)\)$/, '($1)');
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  if (url.startsWith('node:')) return url;
  const project = /\/work\/[^/]+\/(.*)$/.exec(url.replace(/^file:\/\//, ''));
  return project ? project[1]! : url;
}

function summarizeProfile(file: string, profile: CpuProfile, top = 25): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000));
  const fn = new Map<string, number>();
  const mod = new Map<string, number>();
  let idle = 0;
  for (const [id, ms] of self) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(idle)') {
      idle += ms;
      continue;
    }
    const name = `${frame.functionName || '(anonymous)'} ${moduleOf(frame.url, frame.functionName)}:${frame.lineNumber + 1}`;
    fn.set(name, (fn.get(name) ?? 0) + ms);
    const m = moduleOf(frame.url, frame.functionName);
    mod.set(m, (mod.get(m) ?? 0) + ms);
  }
  const sorted = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, ms]) => ({ name, ms }));
  return {
    file,
    totalMs: (profile.endTime - profile.startTime) / 1000,
    idleMs: idle,
    byFunction: sorted(fn),
    byModule: sorted(mod),
  };
}

const USAGE =
  "usage: npx tsx scripts/bench/profile-summary.ts DIR [TOP]  (DIR: a bench run's --profile folder; TOP: rows, 25)";

function main(): number {
  const [dir, topArg = '25'] = process.argv.slice(2);
  if (dir === '--help' || dir === '-h') {
    console.log(USAGE);
    return 0;
  }
  const top = Number(topArg);
  if (!dir || !fs.existsSync(dir) || !fs.statSync(dir).isDirectory() || !Number.isInteger(top) || top < 1) {
    console.error(
      dir ? `Not a folder of profiles, or TOP not a positive integer: ${dir} ${topArg}` : 'No folder given.',
    );
    console.error(USAGE);
    return 1;
  }
  for (const name of fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort()) {
    const profile = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as CpuProfile;
    const summary = summarizeProfile(name, profile, top);
    const busy = summary.totalMs - summary.idleMs;
    const rows = (list: { name: string; ms: number }[]) => list.map((m) => [fmtNum(m.ms, 0), pct(m.ms / busy), m.name]);
    printTables(
      (['package / file', 'function'] as const).map((by) => ({
        title: `${name}: ${(summary.totalMs / 1000).toFixed(1)} s profiled, ${(busy / 1000).toFixed(1)} s busy; by ${by} (self time)`,
        headers: ['ms', 'share', by],
        rows: rows(by === 'function' ? summary.byFunction : summary.byModule),
      })),
    );
  }
  return 0;
}

if (require.main === module) process.exitCode = main();
