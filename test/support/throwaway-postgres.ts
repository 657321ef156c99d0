/**
 * A PostgreSQL cluster of the test's own, for what cannot be done to a shared server: pause its WAL
 * writer, kill every process of it at once, start it again (crash recovery). `initdb` and `pg_ctl`
 * under a temporary folder, on a free loopback port, trust authentication; as root (CI and these
 * machines) the binaries run as the `postgres` user, since initdb and postgres refuse root.
 *
 * The binaries are found on PATH, else under /usr/lib/postgresql/<version>/bin. Without them the
 * suites skip with a message, except under CI=true, where they must run.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';

export interface ThrowawayCluster {
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  url: string;
  /** Stops the WAL writer (SIGSTOP): commits that do not flush the WAL themselves stay in memory. */
  pauseWalWriter(): void;
  /** SIGKILL to the postmaster and all its children in one go, as a crash; resolves once none is running. */
  kill(): Promise<void>;
  /** Starts the server again (after a kill: crash recovery from the WAL on disk). */
  start(): void;
  /** Kills whatever of it still runs and removes the folder; safe at any time, more than once. */
  destroy(): void;
}

const SERVER_USER = 'postgres';
const START_TIMEOUT_SECONDS = 30;

/**
 * Small and quiet: no checkpoint, background writer or autovacuum that would write the WAL out by
 * chance during a test, and WAL buffers far larger than a test writes, so no backend has to write
 * them out to make room either.
 */
const SETTINGS = {
  listen_addresses: "'127.0.0.1'",
  max_connections: '30',
  shared_buffers: "'32MB'",
  wal_buffers: "'8MB'",
  checkpoint_timeout: "'1d'",
  max_wal_size: "'1GB'",
  autovacuum: 'off',
  bgwriter_lru_maxpages: '0',
};

const running = new Set<ThrowawayCluster>();
process.on('exit', () => {
  for (const cluster of running) cluster.destroy();
});

/** The folder holding initdb, pg_ctl and postgres, or undefined. */
function binaryFolder(): string | undefined {
  for (const folder of (process.env.PATH ?? '').split(delimiter)) {
    const initdb = join(folder, 'initdb');
    if (folder !== '' && existsSync(initdb)) return dirname(realpathSync(initdb));
  }
  const installed = '/usr/lib/postgresql';
  if (!existsSync(installed)) return undefined;
  const versions = readdirSync(installed).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a));
  return versions.map((version) => join(installed, version, 'bin')).find((folder) => existsSync(join(folder, 'initdb')));
}

function serverUser(): { uid: number; gid: number } | undefined {
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, SERVER_USER], { encoding: 'utf8' }).trim());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    return undefined;
  }
}

const asRoot = () => process.getuid?.() === 0;

/** Why a throwaway cluster cannot be started here, or null when it can. Throws under CI, where it must. */
export function throwawayPostgresMissing(): string | null {
  let reason: string | undefined;
  if (process.platform !== 'linux') reason = 'they need Linux (/proc) to find and signal the server processes.';
  else if (binaryFolder() === undefined) reason = 'no initdb on PATH or under /usr/lib/postgresql/*/bin (apt-get install postgresql).';
  else if (asRoot() && serverUser() === undefined) reason = `running as root, and there is no \`${SERVER_USER}\` user to run the server as.`;
  if (reason === undefined) return null;
  const message = `PostgreSQL crash tests skipped: ${reason}`;
  if (process.env.CI === 'true') throw new Error(`${message} Under CI they must run.`);
  console.warn(message);
  return message;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The pids whose parent is `parent`, from /proc. */
function childrenOf(parent: number): number[] {
  const children: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readProcStat(Number(name));
    if (stat?.parent === parent) children.push(Number(name));
  }
  return children;
}

/** State and parent of a process; undefined once it is gone. The command is in parentheses and may hold spaces. */
function readProcStat(pid: number): { state: string; parent: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, parent] = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: state!, parent: Number(parent) };
  } catch {
    return undefined;
  }
}

/** Whether `pid` runs (a zombie, dead but not yet reaped, does not). */
function isRunning(pid: number): boolean {
  const stat = readProcStat(pid);
  return stat !== undefined && stat.state !== 'Z';
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

export async function startThrowawayCluster(): Promise<ThrowawayCluster> {
  const bin = binaryFolder();
  if (bin === undefined) throw new Error('no PostgreSQL binaries (see throwawayPostgresMissing)');
  const folder = mkdtempSync(join(tmpdir(), 'tollgate-pg-'));
  const data = join(folder, 'data');
  const user = asRoot() ? serverUser() : undefined;
  if (asRoot() && user === undefined) throw new Error(`running as root without a \`${SERVER_USER}\` user`);
  if (user !== undefined) chownSync(folder, user.uid, user.gid);
  const run = (program: string, args: string[]) => {
    const command = user === undefined ? [join(bin, program), ...args] : ['runuser', '-u', SERVER_USER, '--', join(bin, program), ...args];
    try {
      execFileSync(command[0]!, command.slice(1), { cwd: folder, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', timeout: (START_TIMEOUT_SECONDS + 10) * 1000 });
    } catch (error) {
      const { stderr, stdout } = error as { stderr?: string; stdout?: string };
      const log = existsSync(join(folder, 'server.log')) ? readFileSync(join(folder, 'server.log'), 'utf8').slice(-4000) : '';
      throw new Error(`${program} ${args.join(' ')} failed: ${stderr ?? ''}${stdout ?? ''}\n${log}`, { cause: error });
    }
  };
  const postmaster = () => {
    try {
      return Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    } catch {
      return undefined;
    }
  };
  /** The postmaster and its children, postmaster first; empty when it does not run. */
  const processes = (): number[] => {
    const pid = postmaster();
    return pid !== undefined && isRunning(pid) ? [pid, ...childrenOf(pid)] : [];
  };
  const killAll = (): number[] => {
    const pids = processes();
    for (const pid of pids) signal(pid, 'SIGKILL');
    return pids;
  };

  let port = 0;
  const cluster: ThrowawayCluster = {
    get url() {
      return `postgres://${SERVER_USER}@127.0.0.1:${port}/postgres`;
    },
    pauseWalWriter() {
      const pid = postmaster();
      const walWriter = pid === undefined ? undefined : childrenOf(pid).find((child) => readCommand(child).startsWith('postgres: walwriter'));
      if (walWriter === undefined) throw new Error('the cluster has no WAL writer process to pause');
      signal(walWriter, 'SIGSTOP');
    },
    async kill() {
      const pids = killAll();
      const deadline = Date.now() + 10_000;
      while (pids.some(isRunning)) {
        if (Date.now() > deadline) throw new Error(`processes ${pids.filter(isRunning).join(', ')} outlived SIGKILL`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // A postmaster that nobody has reaped yet (a zombie) still answers kill(pid, 0), so the next
      // one would take it for a running server; it is dead, so its lock files go, as a reboot
      // would clear them.
      const pid = postmaster();
      if (pid !== undefined && readProcStat(pid) !== undefined) {
        rmSync(join(data, 'postmaster.pid'), { force: true });
        rmSync(join(folder, `.s.PGSQL.${port}.lock`), { force: true });
      }
    },
    start() {
      run('pg_ctl', ['start', '-D', data, '-l', join(folder, 'server.log'), '-w', '-t', String(START_TIMEOUT_SECONDS)]);
    },
    destroy() {
      running.delete(cluster);
      if (processes().length > 0) {
        // A paused WAL writer would not act on the stop until continued.
        for (const pid of processes()) signal(pid, 'SIGCONT');
        try {
          run('pg_ctl', ['stop', '-D', data, '-m', 'immediate', '-w', '-t', '10']);
        } catch {
          // Killed below.
        }
      }
      killAll();
      rmSync(folder, { recursive: true, force: true });
    },
  };
  running.add(cluster);
  try {
    run('initdb', ['-D', data, '-U', SERVER_USER, '--auth=trust', '--encoding=UTF8', '--no-sync', '--no-instructions']);
    port = await freePort();
    const settings = { ...SETTINGS, port: String(port), unix_socket_directories: `'${folder}'` };
    writeFileSync(join(data, 'postgresql.auto.conf'), Object.entries(settings).map(([name, value]) => `${name} = ${value}\n`).join(''));
    cluster.start();
  } catch (error) {
    cluster.destroy();
    throw error;
  }
  return cluster;
}

function readCommand(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
  } catch {
    return '';
  }
}
