// Process trees and memory, read from /proc (Linux): the RSS of code-server's process tree (the
// VS Code server, the extension host, `agentls serve`) and of Chromium's, and the machine's used
// memory, sampled while the test runs; and killing a whole tree at teardown.
import { readFileSync, readdirSync } from 'node:fs';

const PAGE_KB = 4; // getconf PAGESIZE is 4096 on the machines this runs on (x86-64, arm64 Debian)

/** pid -> { ppid, rssKb, name } for every process we can read. */
export function processTable() {
  const table = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const name = stat.slice(stat.indexOf('(') + 1, close);
      const fields = stat.slice(close + 2).split(' '); // fields[0] is field 3 (state)
      table.set(Number(entry), { ppid: Number(fields[1]), rssKb: Number(fields[21]) * PAGE_KB, name });
    } catch {
      // gone meanwhile
    }
  }
  return table;
}

/** The pids of `root` and all its descendants. */
export function descendants(root, table = processTable()) {
  const children = new Map();
  for (const [pid, { ppid }] of table) {
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(pid);
  }
  const out = [];
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop();
    if (!table.has(pid) && pid !== root) continue;
    out.push(pid);
    for (const child of children.get(pid) ?? []) stack.push(child);
  }
  return out.filter((pid) => table.has(pid));
}

function rssMiB(pids, table) {
  let kb = 0;
  for (const pid of pids) kb += table.get(pid)?.rssKb ?? 0;
  return kb / 1024;
}

/**
 * The proportional set size of the processes (shared pages divided among their users): unlike a
 * sum of RSS it does not count the libraries Chromium's processes share once per process.
 */
function pssMiB(pids) {
  let kb = 0;
  for (const pid of pids) {
    try {
      const m = /^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
      if (m) kb += Number(m[1]);
    } catch {
      // gone, or no smaps_rollup (Linux < 4.14)
    }
  }
  return kb / 1024;
}

/** The machine's used memory as `free` counts it (MemTotal - MemAvailable), and the total, in MiB. */
export function machineMemory() {
  const info = Object.fromEntries(
    readFileSync('/proc/meminfo', 'utf8')
      .split('\n')
      .map((line) => /^(\w+):\s+(\d+)/.exec(line))
      .filter(Boolean)
      .map((m) => [m[1], Number(m[2])]),
  );
  return { totalMiB: info.MemTotal / 1024, usedMiB: (info.MemTotal - info.MemAvailable) / 1024 };
}

/**
 * Samples every `intervalMs`: code-server's tree (rooted at the pid `codeServerPid()` returns),
 * the rest of this process's tree (Chromium), and the machine's used memory. stop() gives the peaks.
 */
export function memorySampler(codeServerPid, intervalMs = 500) {
  const baseline = machineMemory();
  const peak = {
    codeServerMiB: 0,
    codeServerPssMiB: 0,
    chromiumMiB: 0,
    chromiumPssMiB: 0,
    machineUsedMiB: baseline.usedMiB,
  };
  let agentlsServeMiB = 0;
  const sample = () => {
    const table = processTable();
    const cs = codeServerPid();
    const csTree = cs ? descendants(cs, table) : [];
    const inCs = new Set(csTree);
    const ours = descendants(process.pid, table).filter((pid) => pid !== process.pid && !inCs.has(pid));
    peak.codeServerMiB = Math.max(peak.codeServerMiB, rssMiB(csTree, table));
    peak.codeServerPssMiB = Math.max(peak.codeServerPssMiB, pssMiB(csTree));
    peak.chromiumMiB = Math.max(peak.chromiumMiB, rssMiB(ours, table));
    peak.chromiumPssMiB = Math.max(peak.chromiumPssMiB, pssMiB(ours));
    const serve = csTree.filter((pid) => /agentls/.test(table.get(pid)?.name ?? ''));
    agentlsServeMiB = Math.max(agentlsServeMiB, rssMiB(serve, table));
    peak.machineUsedMiB = Math.max(peak.machineUsedMiB, machineMemory().usedMiB);
  };
  const timer = setInterval(() => {
    try {
      sample();
    } catch {
      // /proc unreadable: no figures
    }
  }, intervalMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      const round = (n) => Math.round(n);
      return {
        machineTotalMiB: round(baseline.totalMiB),
        machineUsedBeforeMiB: round(baseline.usedMiB),
        machineUsedPeakMiB: round(peak.machineUsedMiB),
        codeServerTreeRssPeakMiB: round(peak.codeServerMiB),
        codeServerTreePssPeakMiB: round(peak.codeServerPssMiB),
        agentlsServeRssPeakMiB: round(agentlsServeMiB),
        chromiumTreeRssPeakMiB: round(peak.chromiumMiB),
        chromiumTreePssPeakMiB: round(peak.chromiumPssMiB),
      };
    },
  };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** SIGTERM the tree of `root` (and its process group), then SIGKILL whatever is left after `graceMs`. */
export async function killTree(root, graceMs = 3000) {
  const signal = (pids, sig) => {
    for (const pid of pids) {
      try {
        process.kill(pid, sig);
      } catch {
        // already gone
      }
    }
  };
  let pids = descendants(root);
  try {
    process.kill(-root, 'SIGTERM'); // the group (code-server is started detached, as its leader)
  } catch {
    // no such group
  }
  signal(pids, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    const table = processTable();
    pids = pids.filter((pid) => table.has(pid) && !/^Z/.test(readState(pid)));
    if (!pids.length) return;
    await sleep(100);
  }
  try {
    process.kill(-root, 'SIGKILL');
  } catch {
    // no such group
  }
  signal(pids, 'SIGKILL');
}

function readState(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return 'X';
  }
}
