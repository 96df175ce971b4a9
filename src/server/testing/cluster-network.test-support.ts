/**
 * Linux network namespaces for the cluster fault suite (Node only, root only): each "host" of the cluster is
 * a network namespace joined to the root namespace by a veth pair, so that a worker process run inside it
 * (`ip netns exec <name> node …`) reaches PostgreSQL — listening in the root namespace on the root side of
 * every veth — over a link the suite can cut.
 *
 * Addresses: one /24 of 10.222.0.0/16 per network (the first `10.222.<k>.0/24` no interface or route of this
 * machine uses yet), one /30 of it per host: host `i` has the root side `10.222.<k>.<4i+1>` and the namespace
 * side `10.222.<k>.<4i+2>`. Names carry this process's id: namespaces `shc-<pid>-<i>`, veths
 * `sh<pid base 36>h<i>` (root side) and `sh<pid base 36>n<i>` (namespace side).
 *
 * `cut(i)` sets the namespace side of host `i`'s veth down: the worker's new connections fail at once (no
 * route), its established connections go silent, and the root side (PostgreSQL) sees no carrier, so packets
 * to the host are dropped — a host that vanished from the network. `restore(i)` sets it up again.
 *
 * Cleanup: `destroy()` kills every process still inside the namespaces and deletes them (deleting a namespace
 * deletes its veth pair); `destroySync()` does the same synchronously for exit hooks; a detached watchdog
 * does it when this process dies without either (kill -9). `removeStaleNetworks()` removes what a process
 * that is no longer alive left behind.
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { isProcessAlive } from '../process-alive';

export type ClusterHost = {
  index: number;
  /** The namespace's name (`ip netns exec <namespace> …`). */
  namespace: string;
  /** The veth's root side (in the root namespace) and namespace side. */
  rootVeth: string;
  namespaceVeth: string;
  /** PostgreSQL's address as this host sees it (the root side of its veth). */
  serverAddress: string;
  /** The host's own address (the namespace side). */
  address: string;
};

export type ClusterNetwork = {
  readonly hosts: readonly ClusterHost[];
  /** The /24 of every host, for pg_hba (`trustedNetworks`). */
  readonly subnet: string;
  /** Every root-side address, for `listen_addresses`. */
  readonly serverAddresses: readonly string[];
  /** Cuts host `index`'s link (its namespace side goes down). */
  cut(index: number): Promise<void>;
  /** Restores host `index`'s link. */
  restore(index: number): Promise<void>;
  /** Whether host `index`'s link is cut now. */
  isCut(index: number): boolean;
  /** Kills every process inside the namespaces and deletes them. Idempotent. */
  destroy(): Promise<void>;
  /** The same, synchronously (for `process.on('exit')`). */
  destroySync(): void;
};

const namePrefix = 'shc-';

function run(command: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} failed: ${(stderr || stdout).trim()}`));
      else resolve(stdout);
    });
  });
}

function quiet(command: string, args: readonly string[]): void {
  spawnSync(command, args, { stdio: 'ignore' });
}

/**
 * Whether this machine lets the suite make network namespaces: `{ ok: true }`, or why not. Only "not root"
 * and "not permitted" (a container without CAP_NET_ADMIN / CAP_SYS_ADMIN) count as unable; a missing `ip`
 * command on a root machine is an error to fix (install iproute2), reported as such by the caller.
 */
export function namespaceSupport(): { ok: true } | { ok: false; reason: string } {
  if (process.platform !== 'linux')
    return { ok: false, reason: `network namespaces need Linux (this is ${process.platform})` };
  if (typeof process.getuid !== 'function' || process.getuid() !== 0)
    return { ok: false, reason: 'making network namespaces needs root (run the tests as root, as CI does)' };
  const probe = `${namePrefix}probe-${process.pid}`;
  const made = spawnSync('ip', ['netns', 'add', probe], { encoding: 'utf8' });
  if (made.error)
    throw new Error(
      `The cluster fault suite needs the ip command (Debian: apt-get install iproute2): ${made.error.message}`,
    );
  if (made.status !== 0) {
    const message = made.stderr.trim();
    if (/not permitted|permission denied/i.test(message))
      return { ok: false, reason: `this machine does not permit network namespaces: ${message}` };
    throw new Error(`ip netns add ${probe} failed: ${message}`);
  }
  quiet('ip', ['netns', 'del', probe]);
  return { ok: true };
}

function namespacesNow(): string[] {
  const listed = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  return (listed.stdout ?? '')
    .split('\n')
    .map((line) => line.trim().split(/\s+/)[0] ?? '')
    .filter((name) => name.startsWith(namePrefix));
}

/** Kills every process inside `namespace`, then deletes it (its veths go with it). */
function deleteNamespaceSync(namespace: string): void {
  const pids = spawnSync('ip', ['netns', 'pids', namespace], { encoding: 'utf8' });
  for (const pid of (pids.stdout ?? '')
    .split('\n')
    .map(Number)
    .filter((pid) => pid > 0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  quiet('ip', ['netns', 'del', namespace]);
}

/** Removes the namespaces (and their processes) of suite runs whose process is no longer alive. */
export function removeStaleNetworks(): string[] {
  const removed: string[] = [];
  for (const namespace of namespacesNow()) {
    const match = /^shc-(?:probe-)?(\d+)(?:-\d+)?$/.exec(namespace);
    if (!match || isProcessAlive(Number(match[1]))) continue;
    deleteNamespaceSync(namespace);
    removed.push(namespace);
  }
  return removed;
}

/** The first 10.222.<k>.0/24 that no address or route of this machine touches. */
function freeSubnet(): number {
  const used = `${spawnSync('ip', ['-4', 'addr'], { encoding: 'utf8' }).stdout}\n${spawnSync('ip', ['-4', 'route', 'show', 'table', 'all'], { encoding: 'utf8' }).stdout}`;
  const start = process.pid % 250;
  for (let offset = 0; offset < 250; offset++) {
    const k = ((start + offset) % 250) + 1;
    if (!used.includes(`10.222.${k}.`)) return k;
  }
  throw new Error('No free 10.222.<k>.0/24 subnet for the cluster network namespaces.');
}

/** Makes `count` namespaces, each with a veth pair to the root namespace (see the module comment). */
export async function createClusterNetwork(count: number): Promise<ClusterNetwork> {
  if (count < 1 || count > 60) throw new RangeError(`createClusterNetwork: 1–60 hosts; got ${count}.`);
  removeStaleNetworks();
  const k = freeSubnet();
  const tag = process.pid.toString(36);
  const hosts: ClusterHost[] = Array.from({ length: count }, (_, index) => ({
    index,
    namespace: `${namePrefix}${process.pid}-${index}`,
    rootVeth: `sh${tag}h${index}`,
    namespaceVeth: `sh${tag}n${index}`,
    serverAddress: `10.222.${k}.${4 * index + 1}`,
    address: `10.222.${k}.${4 * index + 2}`,
  }));
  const cut = new Set<number>();
  let destroyed = false;

  // If this process dies without cleaning up (kill -9), a detached watchdog kills what runs inside the
  // namespaces and deletes them.
  const names = hosts.map((host) => `'${host.namespace}'`).join(' ');
  const watchdog = spawn(
    'sh',
    [
      '-c',
      `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; for ns in ${names}; do ` +
        `for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done; ` +
        `ip netns del "$ns" 2>/dev/null; done`,
    ],
    { detached: true, stdio: 'ignore' },
  );
  watchdog.unref();

  const destroySync = () => {
    if (destroyed) return;
    destroyed = true;
    for (const host of hosts) {
      deleteNamespaceSync(host.namespace);
      quiet('ip', ['link', 'del', host.rootVeth]); // normally gone with the namespace
    }
    if (watchdog.pid !== undefined) {
      try {
        process.kill(watchdog.pid);
      } catch {
        // already ended
      }
    }
  };

  try {
    for (const host of hosts) {
      await run('ip', ['netns', 'add', host.namespace]);
      await run('ip', ['link', 'add', host.rootVeth, 'type', 'veth', 'peer', 'name', host.namespaceVeth]);
      await run('ip', ['link', 'set', host.namespaceVeth, 'netns', host.namespace]);
      await run('ip', ['addr', 'add', `${host.serverAddress}/30`, 'dev', host.rootVeth]);
      await run('ip', ['link', 'set', host.rootVeth, 'up']);
      const inside = (args: string[]) => run('ip', ['netns', 'exec', host.namespace, 'ip', ...args]);
      await inside(['addr', 'add', `${host.address}/30`, 'dev', host.namespaceVeth]);
      await inside(['link', 'set', host.namespaceVeth, 'up']);
      await inside(['link', 'set', 'lo', 'up']);
    }
  } catch (error) {
    destroySync();
    throw error;
  }

  const hostAt = (index: number) => {
    const host = hosts[index];
    if (!host) throw new RangeError(`No host ${index} in this cluster network.`);
    return host;
  };

  return {
    hosts,
    subnet: `10.222.${k}.0/24`,
    serverAddresses: hosts.map((host) => host.serverAddress),
    async cut(index) {
      const host = hostAt(index);
      await run('ip', ['netns', 'exec', host.namespace, 'ip', 'link', 'set', host.namespaceVeth, 'down']);
      cut.add(index);
    },
    async restore(index) {
      const host = hostAt(index);
      await run('ip', ['netns', 'exec', host.namespace, 'ip', 'link', 'set', host.namespaceVeth, 'up']);
      cut.delete(index);
    },
    isCut: (index) => cut.has(index),
    async destroy() {
      destroySync();
    },
    destroySync,
  };
}
