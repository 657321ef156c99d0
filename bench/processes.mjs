/**
 * Child processes of the benchmark: each runs in its own process group with the open-files limit
 * raised to the hard limit (5,000 streams need about 10,000 descriptors in the proxy), and every
 * group still alive is killed when the benchmark exits, however it exits.
 */
import { spawn } from 'node:child_process';

const liveGroups = new Set();

function killGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

/** Kills every group still alive, synchronously (safe in an 'exit' handler). */
export function killAllProcesses() {
  for (const pid of liveGroups) killGroup(pid, 'SIGKILL');
  liveGroups.clear();
}

/**
 * Starts `node <args>` in a new process group. With `ipc` the child gets an IPC channel (for
 * scripts that talk with process.send). Keeps the last 8 KB of its output for error messages.
 */
export function startNode(args, { env = process.env, ipc = false } = {}) {
  const raiseLimit = 'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$@"';
  const child = spawn('sh', ['-c', raiseLimit, 'sh', process.execPath, ...args], {
    detached: true,
    env,
    stdio: ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  liveGroups.add(child.pid);
  let output = '';
  const keep = (chunk) => {
    output = (output + chunk.toString('utf8')).slice(-8192);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      liveGroups.delete(child.pid);
      resolve({ code, signal });
    }),
  );
  return { child, pid: child.pid, exited, output: () => output };
}

/** Resolves with the port a server script prints as `LISTENING <port>`; rejects if it exits or times out. */
export function listeningPort(handle, timeoutMs = 10_000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no LISTENING line within ${timeoutMs} ms: ${handle.output()}`)), timeoutMs);
    const onData = () => {
      const match = /LISTENING (\d+)/.exec(handle.output());
      if (match) {
        clearTimeout(timer);
        handle.child.stdout.off('data', onData);
        resolve(Number(match[1]));
      }
    };
    handle.child.stdout.on('data', onData);
    handle.exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code ?? signal}) before listening: ${handle.output()}`));
    });
  });
}

/** SIGTERM to the group, then SIGKILL after `graceMs`; resolves once the leader has exited. */
export async function stopProcess(handle, graceMs = 3_000) {
  if (!liveGroups.has(handle.pid)) return handle.exited;
  killGroup(handle.pid, 'SIGTERM');
  const timer = setTimeout(() => killGroup(handle.pid, 'SIGKILL'), graceMs);
  const result = await handle.exited;
  clearTimeout(timer);
  // Workers of a cluster may outlive their primary for a moment.
  killGroup(handle.pid, 'SIGKILL');
  return result;
}

/** Sends one job to a script with an IPC channel and resolves with its first answer. */
export function ask(handle, message, timeoutMs) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      killGroup(handle.pid, 'SIGKILL');
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const onExit = ({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code ?? signal}) without an answer: ${handle.output()}`));
    };
    handle.child.once('message', (answer) => {
      clearTimeout(timer);
      resolve(answer);
    });
    handle.exited.then(onExit);
    if (message !== undefined) handle.child.send(message);
  });
}
